#include "stream_engine.h"

#include <utility>

namespace testdev {

using accel::adapter::InvalidArgument;

StreamEngine::StreamEngine(int devices) : devices_(devices) {
  ACCEL_ADAPTER_CHECK(devices >= 0 && devices <= kMaxDevices, InvalidArgument,
                      "testdev: ", devices, " devices; from 0 to ", kMaxDevices,
                      " are simulated");
  for (int i = 0; i < devices * kStreamsPerDevice; ++i)
    queues_.push_back(std::make_unique<Queue>());
}

StreamEngine::~StreamEngine() {
  for (const std::unique_ptr<Queue>& q : queues_) {
    {
      std::lock_guard<std::mutex> lock(q->mutex);
      q->stop = true;
      q->held = false;
    }
    q->wake.notify_all();
    if (q->worker.joinable()) q->worker.join();
  }
}

std::int64_t StreamEngine::newStream(std::int8_t device, int priority) {
  ACCEL_ADAPTER_CHECK(priority >= 0 && priority < kPriorities, InvalidArgument,
                      "testdev: stream priority ", priority, " is outside [0, ",
                      kPriorities - 1, "]");
  const unsigned n =
      next_[static_cast<std::size_t>(device)][static_cast<std::size_t>(priority)]
          .fetch_add(1, std::memory_order_relaxed);
  return 1 + priority * kPoolStreams + static_cast<int>(n % kPoolStreams);
}

void StreamEngine::requireKnown(Stream stream) const {
  ACCEL_ADAPTER_CHECK(stream.device >= 0 && stream.device < devices_ && stream.id >= 0 &&
                          stream.id < kStreamsPerDevice,
                      InvalidArgument, "testdev has no stream ", stream.id, " on device ",
                      int(stream.device), " (stream ids are 0 to ", kStreamsPerDevice - 1,
                      ")");
}

StreamEngine::Queue& StreamEngine::queue(Stream stream) {
  requireKnown(stream);
  return *queues_[static_cast<std::size_t>(stream.device * kStreamsPerDevice +
                                           stream.id)];
}

void StreamEngine::enqueue(Stream stream, std::function<void()> work) {
  push(stream, Item{std::move(work), nullptr});
}

void StreamEngine::push(Stream stream, Item item) {
  Queue& q = queue(stream);
  {
    std::lock_guard<std::mutex> lock(q.mutex);
    if (!q.worker.joinable()) q.worker = std::thread([this, &q] { run(q); });
    q.work.push_back(std::move(item));
  }
  q.wake.notify_all();
}

void StreamEngine::run(Queue& q) {
  std::unique_lock<std::mutex> lock(q.mutex);
  for (;;) {
    q.wake.wait(lock, [&] { return q.stop || (!q.held && !q.work.empty()); });
    if (q.stop) return;
    Item item = std::move(q.work.front());
    q.work.pop_front();
    q.running = true;
    lock.unlock();
    if (item.work) item.work();
    item.work = nullptr;  // what it holds (staged bytes) goes before it counts as run
    lock.lock();
    q.running = false;
    if (item.mark != nullptr) {
      lock.unlock();
      pass(*item.mark);
      lock.lock();
    }
  }
}

void StreamEngine::pass(Mark& mark) {
  {
    std::lock_guard<std::mutex> lock(passed_mutex_);
    mark.at = Clock::now();
    mark.passed.store(true, std::memory_order_release);
  }
  passed_.notify_all();
}

std::shared_ptr<Mark> StreamEngine::mark(Stream stream) {
  auto m = std::make_shared<Mark>();
  push(stream, Item{nullptr, m});
  return m;
}

void StreamEngine::waitOn(Stream stream, std::shared_ptr<Mark> mark) {
  enqueue(stream, [this, mark = std::move(mark)] { waitFor(*mark); });
}

void StreamEngine::waitFor(const Mark& mark) {
  std::unique_lock<std::mutex> lock(passed_mutex_);
  passed_.wait(lock, [&] { return mark.passed.load(std::memory_order_acquire); });
}

bool StreamEngine::idle(Stream stream) {
  Queue& q = queue(stream);
  std::lock_guard<std::mutex> lock(q.mutex);
  return q.work.empty() && !q.running;
}

void StreamEngine::synchronize(Stream stream) {
  const std::shared_ptr<Mark> m = mark(stream);
  waitFor(*m);
}

void StreamEngine::synchronizeDevice(std::int8_t device) {
  for (std::int64_t id = 0; id < kStreamsPerDevice; ++id) {
    const Stream stream{id, device};
    Queue& q = queue(stream);
    bool started = false;
    {
      std::lock_guard<std::mutex> lock(q.mutex);
      started = q.worker.joinable();
    }
    if (started) synchronize(stream);
  }
}

void StreamEngine::hold(Stream stream, bool held) {
  Queue& q = queue(stream);
  {
    std::lock_guard<std::mutex> lock(q.mutex);
    q.held = held;
  }
  q.wake.notify_all();
}

}  // namespace testdev
