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
string(JOIN "," ACCEL_TRAINING_TRACE_NAMES ${ACCEL_TRAINING_TRACES})
