// A shared library that is not a plugin: it exports a function, but no
// accel_plugin_entry_v2.
extern "C" __attribute__((visibility("default"))) int plugtestPlainFunction() {
  return 42;
}
