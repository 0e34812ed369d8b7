-- The hello-world baseline: `GET URL` over and over, with the same summary line as replay.lua.
--
--   wrk -s plain.lua URL

dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "") .. "summary.lua")

function done(summary, latency, requests)
    write_summary(summary, latency, 0)
end
