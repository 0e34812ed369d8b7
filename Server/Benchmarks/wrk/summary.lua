-- The one summary line every wrk script here ends with: `WRK_JSON {...}`, requests/s and latency
-- percentiles (µs); `wrapped` says how often replay.lua went round its file (0 for the others).
-- Loaded with dofile by plain.lua and replay.lua.

function write_summary(summary, latency, wrapped)
    local seconds = summary.duration / 1e6
    io.write(string.format(
        'WRK_JSON {"requests":%d,"seconds":%.3f,"rps":%.1f,"p50_us":%d,"p90_us":%d,"p99_us":%d,"max_us":%d,'
            .. '"connect_errors":%d,"read_errors":%d,"write_errors":%d,"timeouts":%d,"non_2xx":%d,"wrapped":%d}\n',
        summary.requests, seconds, summary.requests / seconds,
        latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max,
        summary.errors.connect, summary.errors.read, summary.errors.write, summary.errors.timeout,
        summary.errors.status, wrapped))
end
