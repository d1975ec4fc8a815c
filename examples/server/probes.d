/*
 * Probes of the example server (examples/server/server.cc).
 * Compiled by `probekit compile` during the build.
 */
provider demo {
    /** A request was accepted on connection `fd` for `path`. */
    probe request__start(int fd, string path);

    /**
     * A request finished.
     * @param status the HTTP-like status sent back
     * @param latency_us time from start to done, in microseconds
     */
    probe request__done(int fd, int status, uint64_t latency_us);

    /** Expensive debug view of the cache, built only while someone listens. */
    probe cache__stats(string summary, uint32_t entries, double hit_ratio);

    probe tick();
};
