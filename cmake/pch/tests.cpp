// The object the tests' precompiled header is compiled for (MTPERF_PCH); empty.
