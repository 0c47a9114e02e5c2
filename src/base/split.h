#pragma once

// KVB_SPLIT keeps a function out of its callers in a build that asks for it
// (KVB_SPLIT_HOT_CODE: the page's simulator module, wasm/CMakeLists.txt), and means
// nothing elsewhere. A browser's WebAssembly engine runs each function in baseline code
// until it has run a while, then optimizes it on a background thread, one function per
// job, in time that grows faster than the function's size. With the simulator's whole
// step inlined into one 26 KB function, that job took 0.3-1 s (under load) and the first
// Run in the page spent most of its simulation in baseline code (issue 13); split into parts
// of a few KB, the parts are optimized sooner and several at a time. Natively the inliner's
// choice stands.
#ifdef KVB_SPLIT_HOT_CODE
#define KVB_SPLIT __attribute__((noinline))
#else
#define KVB_SPLIT
#endif
