// The events group: create, record, query, synchronize, elapsed time,
// block a stream, destroy.
//
// Streams are built directly (id 0 is every device's default stream) so that
// a backend with events but without the streams group can be checked too.
#include <cmath>
#include <vector>

#include "conformance_case.h"

namespace accel::conformance::detail {
namespace events_cases {
namespace {

Stream defaultStreamOf(const AcceleratorHooks& hooks, int index) {
  return Stream(deviceOf(hooks, index), kDefaultStreamId);
}

// Destroys an event at scope exit, so that a failed check leaks nothing.
class ScopedEvent {
 public:
  ScopedEvent(AcceleratorHooks& hooks, int index, EventFlags flags = {})
      : hooks_(hooks), id_(hooks.createEvent(DeviceIndex(index), flags)) {}
  ScopedEvent(const ScopedEvent&) = delete;
  ScopedEvent& operator=(const ScopedEvent&) = delete;
  ~ScopedEvent() { hooks_.destroyEvent(id_); }
  [[nodiscard]] EventId id() const noexcept { return id_; }

 private:
  AcceleratorHooks& hooks_;
  EventId id_;
};

void recordedEventCompletesAfterSynchronize(AcceleratorHooks& hooks) {
  int count = hooks.deviceCount();
  for (int i = 0; i < count; ++i) {
    ScopedEvent event(hooks, i);
    EXPECT_NE(event.id(), kNoEvent)
        << hookName(HookId::createEvent) << "(" << i << ") returned kNoEvent";
    hooks.recordEvent(event.id(), defaultStreamOf(hooks, i));
    EXPECT_NO_THROW(hooks.synchronizeEvent(event.id()))
        << hookName(HookId::synchronizeEvent);
    EXPECT_TRUE(hooks.queryEvent(event.id()))
        << hookName(HookId::queryEvent) << "() right after "
        << hookName(HookId::synchronizeEvent) << "() on device " << i;
  }
  ScopedEvent first(hooks, 0);
  ScopedEvent second(hooks, 0);
  EXPECT_NE(first.id(), second.id())
      << "two live " << hookName(HookId::createEvent) << "() results share an id";
}

void elapsedTimeBetweenTimedEvents(AcceleratorHooks& hooks) {
  EventFlags timing;
  timing.enable_timing = true;
  ScopedEvent start(hooks, 0, timing);
  ScopedEvent end(hooks, 0, timing);
  Stream stream = defaultStreamOf(hooks, 0);
  hooks.recordEvent(start.id(), stream);
  hooks.recordEvent(end.id(), stream);
  hooks.synchronizeEvent(end.id());
  double ms = hooks.elapsedTime(start.id(), end.id());
  EXPECT_TRUE(std::isfinite(ms)) << hookName(HookId::elapsedTime) << "() = " << ms;
  EXPECT_GE(ms, 0.0) << hookName(HookId::elapsedTime)
                     << "(start, end) of events recorded in that order";

  ScopedEvent plainStart(hooks, 0);
  ScopedEvent plainEnd(hooks, 0);
  hooks.recordEvent(plainStart.id(), stream);
  hooks.recordEvent(plainEnd.id(), stream);
  hooks.synchronizeEvent(plainEnd.id());
  EXPECT_TRUE(throwsAccelError([&] {
    (void)hooks.elapsedTime(plainStart.id(), plainEnd.id());
  })) << hookName(HookId::elapsedTime)
      << "() of events created without enable_timing must be an error, not a "
         "number";
}

void blockStreamWaitsForEvent(AcceleratorHooks& hooks) {
  Stream producer = hooks.supports(HookGroup::Streams) ? hooks.getNewStream(0)
                                                       : defaultStreamOf(hooks, 0);
  Stream consumer = defaultStreamOf(hooks, 0);
  ScopedEvent produced(hooks, 0);
  ScopedEvent consumed(hooks, 0);
  hooks.recordEvent(produced.id(), producer);
  hooks.blockStream(produced.id(), consumer);
  hooks.recordEvent(consumed.id(), consumer);
  hooks.synchronizeEvent(consumed.id());
  EXPECT_TRUE(hooks.queryEvent(produced.id()))
      << "after " << hookName(HookId::blockStream)
      << "(event, stream), work recorded on the stream completed before "
         "the "
         "event did";
}

void destroyEventIgnoresUnknownIds(AcceleratorHooks& hooks) {
  static_assert(noexcept(hooks.destroyEvent(kNoEvent)));
  hooks.destroyEvent(kNoEvent);
  hooks.destroyEvent(~EventId{0});
  EventId event = hooks.createEvent(0);
  hooks.destroyEvent(event);
  hooks.destroyEvent(event);  // now unknown: ignored
  SUCCEED() << hookName(HookId::destroyEvent)
            << "() of unknown and already destroyed ids returned";
}

void eventStreamArgumentsAreValidated(AcceleratorHooks& hooks) {
  ScopedEvent event(hooks, 0);
  Stream foreign(Device(DeviceType::CPU, 0), kDefaultStreamId);
  EXPECT_TRUE(throwsContaining<InvalidArgument>(
      [&] { hooks.recordEvent(event.id(), foreign); }, {"cpu"}))
      << hookName(HookId::recordEvent) << "(event, a cpu stream)";
  EXPECT_TRUE(throwsContaining<InvalidArgument>(
      [&] { hooks.blockStream(event.id(), foreign); }, {"cpu"}))
      << hookName(HookId::blockStream) << "(event, a cpu stream)";
  int count = hooks.deviceCount();
  expectIndexRejected(hooks, HookId::createEvent, count,
                      [&](DeviceIndex i) { return hooks.createEvent(i); });
}

}  // namespace
}  // namespace events_cases

std::vector<ConformanceCase> eventsCases() {
  using namespace events_cases;
  using enum HookId;
  return {
      deviceCase("RecordedEventCompletesAfterSynchronize",
                 recordedEventCompletesAfterSynchronize,
                 {createEvent, recordEvent, synchronizeEvent, queryEvent, destroyEvent}),
      deviceCase("ElapsedTimeBetweenTimedEvents", elapsedTimeBetweenTimedEvents,
                 {elapsedTime, recordEvent, synchronizeEvent}),
      deviceCase("BlockStreamWaitsForEvent", blockStreamWaitsForEvent,
                 {blockStream, recordEvent, queryEvent}),
      deviceCase("DestroyEventIgnoresUnknownIds", destroyEventIgnoresUnknownIds,
                 {destroyEvent, createEvent}),
      deviceCase("EventStreamArgumentsAreValidated", eventStreamArgumentsAreValidated,
                 {recordEvent, blockStream, createEvent})};
}

}  // namespace accel::conformance::detail
