// The program that makes tests/support/precompiled.h's precompiled header
// for the tree's test programs (tests/CMakeLists.txt). It runs no test: its
// main is GoogleTest's, which finds none.
