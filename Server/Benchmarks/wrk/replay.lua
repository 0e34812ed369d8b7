-- Replays pre-built requests, one per line of a file, each used once (wrapping around if wrk
-- outruns the file; the summary says how often). Used by scripts/bench-server.
--
--   wrk -s replay.lua URL -- METHOD PATH FILE THREADS [START]
--
-- Each line is `CREDENTIAL<TAB>JSON-BODY` (the body may be empty: no body, no Content-Type), or
-- `CREDENTIAL<TAB>JSON-BODY<TAB>DPOP-PROOF`: then `Authorization: DPoP CREDENTIAL` and `DPoP: PROOF`.
-- With several wrk threads, thread i takes lines i, i+THREADS, … so no line is sent twice.
-- START (default 0) skips that many lines first (wrapping around): a run can go on where the previous
-- one stopped, so successive runs over a large file visit every line (scale.py --realistic).
-- At the end it prints one line `WRK_JSON {...}` with requests/s and latency percentiles (µs).

dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "") .. "summary.lua")

local threads = {}

function setup(thread)
    thread:set("thread_index", #threads)
    table.insert(threads, thread)
end

requests = {}  -- global: once.lua counts them
local index = 0
wrapped = 0

function init(args)
    local method, path, file, thread_count = args[1], args[2], args[3], tonumber(args[4] or "1")
    local line_number = 0
    for line in io.lines(file) do
        if line_number % thread_count == thread_index then
            local credential, body, proof = line:match("^([^\t]*)\t?([^\t]*)\t?(.*)$")
            local headers = { ["Authorization"] = "Bearer " .. credential }
            if proof ~= "" then
                headers["Authorization"] = "DPoP " .. credential
                headers["DPoP"] = proof
            end
            if body == "" then
                body = nil
            else
                headers["Content-Type"] = "application/json"
            end
            requests[#requests + 1] = wrk.format(method, path, headers, body)
        end
        line_number = line_number + 1
    end
    if #requests == 0 then
        error("replay.lua: no requests for thread " .. thread_index .. " in " .. file)
    end
    index = math.floor(tonumber(args[5] or "0") / thread_count) % #requests
end

function request()
    index = index + 1
    if index > #requests then
        index = 1
        wrapped = wrapped + 1
    end
    return requests[index]
end

function done(summary, latency, requests)
    local wraps = 0
    for _, thread in ipairs(threads) do
        wraps = wraps + (thread:get("wrapped") or 0)
    end
    write_summary(summary, latency, wraps)
end
