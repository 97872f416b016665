# The memory module of libaccel.so (caching allocators, stats, history,
# snapshots); included by src/core/CMakeLists.txt. Explicit list, one .cpp
# per concept.
target_sources(accel PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/allocator_settings.cpp
  ${CMAKE_CURRENT_LIST_DIR}/caching_allocator.cpp
  ${CMAKE_CURRENT_LIST_DIR}/device_cache.cpp
  ${CMAKE_CURRENT_LIST_DIR}/memory_stats.cpp
  ${CMAKE_CURRENT_LIST_DIR}/pinned_caching_allocator.cpp
  ${CMAKE_CURRENT_LIST_DIR}/segment_source.cpp
  ${CMAKE_CURRENT_LIST_DIR}/size_rules.cpp
  ${CMAKE_CURRENT_LIST_DIR}/snapshot_json.cpp
  ${CMAKE_CURRENT_LIST_DIR}/stack_capture.cpp)
