#pragma once
// SIGINT and SIGTERM as requests to stop a run early, not as a kill: the first one ends the
// measured window at once (the runner reports what it measured so far, marked interrupted), a
// second one aborts whatever is still running. Either way the program then unwinds normally, so
// everything the run created (namespaces, emulated-ATM daemons, TUN/TAP devices, state files) is
// removed by its owner, and `mtperf` exits 130.
//
// Thread safety: the counter is a lock-free atomic written only by the signal handler.

namespace mtperf {

// Installs the handlers for SIGINT and SIGTERM (sigaction, without SA_RESTART, so a blocking
// call returns EINTR). Idempotent. Commands that run tests call it; `serve` has its own.
void catch_interrupts();

// How many SIGINT/SIGTERM arrived since catch_interrupts(); 0 when it was never called.
int interrupts();

// For tests: as if one more signal had arrived, or as if none had.
void simulate_interrupt();
void reset_interrupts();

}  // namespace mtperf
