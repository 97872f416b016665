/* A shared library that is not a plugin: it exports a function, but not the
 * plugin entry (accel_plugin_negotiate). */
__attribute__((visibility("default"))) int plugtest_plain_function(void) { return 42; }
