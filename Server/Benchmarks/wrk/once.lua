-- replay.lua's requests, each line sent once and then the thread stops (a warm-up that visits every
-- session once: scripts/bench-server's heartbeats warm the day's activity with it). Same arguments as
-- replay.lua; wrk's -d is only the upper bound.

dofile(debug.getinfo(1, "S").source:match("^@(.*/)") .. "replay.lua")

local answered = 0

function response(status, headers, body)
    answered = answered + 1
    if answered >= #requests then
        wrk.thread:stop()
    end
end
