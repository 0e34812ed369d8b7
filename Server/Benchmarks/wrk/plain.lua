-- The hello-world baseline: `GET URL` over and over, with the same summary line as replay.lua.
--
--   wrk -s plain.lua URL

function done(summary, latency, requests)
    local seconds = summary.duration / 1e6
    io.write(string.format(
        'WRK_JSON {"requests":%d,"seconds":%.3f,"rps":%.1f,"p50_us":%d,"p90_us":%d,"p99_us":%d,"max_us":%d,'
            .. '"connect_errors":%d,"read_errors":%d,"write_errors":%d,"timeouts":%d,"non_2xx":%d,"wrapped":0}\n',
        summary.requests, seconds, summary.requests / seconds,
        latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max,
        summary.errors.connect, summary.errors.read, summary.errors.write, summary.errors.timeout,
        summary.errors.status))
end
