// The opencl backend's devices, properties and native handles, on the
// machine's OpenCL driver.
#include <string>

#include "opencl_test_support.h"

namespace accel::opencl::testing {
namespace {

using HooksTest = OpenClTest;

TEST_F(HooksTest, DevicesHaveSvmAndTypedProperties) {
  const Availability a = availability();
  EXPECT_EQ(a.device_count, hooks().deviceCount());
  EXPECT_TRUE(a.reason.empty()) << a.reason;
  for (int i = 0; i < hooks().deviceCount(); ++i) {
    const DeviceInfo info = deviceInfo(DeviceIndex(i));
    EXPECT_TRUE(info.coarse_grain_svm) << info.name;
    EXPECT_GE(info.version_major, 2) << info.version;
    EXPECT_FALSE(info.name.empty());
    EXPECT_GT(info.global_memory_bytes, 0u);
    EXPECT_GT(info.max_allocation_bytes, 0u);
    EXPECT_LE(info.max_allocation_bytes, info.global_memory_bytes);
    EXPECT_GT(info.compute_units, 0);
    const DeviceProperties p = hooks().getDeviceProperties(DeviceIndex(i));
    EXPECT_EQ(p.name, info.name);
    EXPECT_EQ(p.total_memory_bytes, info.global_memory_bytes);
    EXPECT_EQ(p.multiprocessor_count, info.compute_units);
  }
}

TEST_F(HooksTest, ContextIsCreatedOnFirstUseAndExposed) {
  // Probes never create it; the native accessors do.
  cl_context context = nativeContext(0);
  ASSERT_NE(context, nullptr);
  EXPECT_TRUE(hooks().hasPrimaryContext(0));
  EXPECT_EQ(nativeContext(0), context);
  cl_device_id device = nullptr;
  ASSERT_EQ(
      clGetContextInfo(context, CL_CONTEXT_DEVICES, sizeof device, &device, nullptr),
      CL_SUCCESS);
  EXPECT_EQ(device, nativeDevice(0));
}

TEST_F(HooksTest, QueuesAreInOrderWithProfiling) {
  for (Stream s : {hooks().getDefaultStream(0), hooks().getNewStream(0)}) {
    cl_command_queue queue = nativeQueue(s);
    ASSERT_NE(queue, nullptr);
    cl_command_queue_properties properties = 0;
    ASSERT_EQ(clGetCommandQueueInfo(queue, CL_QUEUE_PROPERTIES, sizeof properties,
                                    &properties, nullptr),
              CL_SUCCESS);
    EXPECT_EQ(properties & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, 0u);
    EXPECT_NE(properties & CL_QUEUE_PROFILING_ENABLE, 0u);
  }
}

TEST_F(HooksTest, ExternalQueuesAreWrappedOnceAndChecked) {
  cl_int status = CL_SUCCESS;
  cl_command_queue mine = clCreateCommandQueueWithProperties(
      nativeContext(0), nativeDevice(0), nullptr, &status);
  ASSERT_EQ(status, CL_SUCCESS);
  const Stream wrapped = wrapExternalQueue(mine, 0);
  EXPECT_EQ(wrapExternalQueue(mine, 0), wrapped);
  EXPECT_EQ(nativeQueue(wrapped), mine);
  hooks().setCurrentStream(wrapped);
  EXPECT_EQ(hooks().getCurrentStream(0), wrapped);
  hooks().synchronizeStream(wrapped);
  EXPECT_TRUE(hooks().queryStream(wrapped));
  hooks().setCurrentStream(hooks().getDefaultStream(0));
  clReleaseCommandQueue(mine);  // the backend keeps its own reference

  const cl_queue_properties outOfOrder[] = {CL_QUEUE_PROPERTIES,
                                            CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, 0};
  cl_command_queue unordered = clCreateCommandQueueWithProperties(
      nativeContext(0), nativeDevice(0), outOfOrder, &status);
  if (status == CL_SUCCESS) {
    try {
      (void)wrapExternalQueue(unordered, 0);
      ADD_FAILURE() << "an out-of-order queue was wrapped";
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("out of order"), std::string::npos)
          << e.what();
    }
    clReleaseCommandQueue(unordered);
  }
  EXPECT_THROW((void)wrapExternalQueue(nullptr, 0), InvalidArgument);
}

TEST_F(HooksTest, StreamsOfOtherTypesAndUnknownIdsAreRefused) {
  EXPECT_THROW((void)nativeQueue(Stream(Device(DeviceType::CPU, 0), 0)), InvalidArgument);
  EXPECT_THROW((void)nativeQueue(Stream(device0(), 999)), InvalidArgument);
  EXPECT_THROW((void)deviceInfo(DeviceIndex(hooks().deviceCount())), InvalidArgument);
}

TEST_F(HooksTest, BuildFailureCarriesTheBuildLog) {
  try {
    (void)buildProgram(0,
                       "kernel void broken(global int* p) { p[0] = undeclared_name; }");
    ADD_FAILURE() << "a program with an undeclared name built";
  } catch (const DeviceError& e) {
    const std::string text = e.what();
    EXPECT_NE(text.find("clBuildProgram failed on opencl:0"), std::string::npos) << text;
    EXPECT_NE(text.find("CL_BUILD_PROGRAM_FAILURE"), std::string::npos) << text;
    EXPECT_NE(text.find("undeclared_name"), std::string::npos) << text;  // the log
  }
}

TEST_F(HooksTest, ProgramsAreBuiltOncePerSourceAndOptions) {
  const char* source = "kernel void twice(global int* p) { p[get_global_id(0)] *= 2; }";
  cl_program first = buildProgram(0, source);
  EXPECT_EQ(buildProgram(0, source), first);
  EXPECT_NE(buildProgram(0, source, "-DUNUSED=1"), first);
}

TEST_F(HooksTest, ShowConfigNamesTheDevicesAndTheLoader) {
  const std::string config = hooks().showConfig();
  EXPECT_NE(config.find("libOpenCL.so.1"), std::string::npos) << config;
  EXPECT_NE(config.find(deviceInfo(0).name), std::string::npos) << config;
}

}  // namespace
}  // namespace accel::opencl::testing
