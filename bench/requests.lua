-- wrk script for the write scenarios: sends each prepared request once, then stops.
-- Arguments (after `--`): the requests file, the number of wrk threads, and how many requests
-- each thread keeps in reserve for its connections still in flight when it stops.
-- Each line of the file: method, path, body and any headers ("Name: value"), tab-separated.

local ffi = require("ffi")
ffi.cdef [[
  typedef struct { long tv_sec; long tv_nsec; } bench_timespec;
  int clock_gettime(int clock, bench_timespec *now);
]]

local function clock()
  local now = ffi.new("bench_timespec")
  ffi.C.clock_gettime(1, now) -- CLOCK_MONOTONIC
  return tonumber(now.tv_sec) + tonumber(now.tv_nsec) / 1e9
end

local mine = {}
local reserve = 0
local sent = 0
started, stopped = nil, nil -- globals, for done() to read through thread:get
local threads = {}

function setup(thread)
  -- Runs in wrk's main state, once per thread before its init: number the threads.
  thread:set("id", #threads)
  threads[#threads + 1] = thread
end

function init(args)
  local file, threads = args[1], tonumber(args[2])
  reserve = tonumber(args[3])
  local n = 0
  for line in io.lines(file) do
    -- Thread k takes lines k, k + threads, ...: no request is sent by two threads.
    if n % threads == id then
      local fields = {}
      for field in (line .. "\t"):gmatch("([^\t]*)\t") do
        fields[#fields + 1] = field
      end
      local headers = {}
      for name, value in pairs(wrk.headers) do
        headers[name] = value
      end
      for k = 4, #fields do
        local name, value = fields[k]:match("^([^:]+): (.*)$")
        headers[name] = value
      end
      local body = fields[3] ~= "" and fields[3] or nil
      mine[#mine + 1] = wrk.format(fields[1], fields[2], headers, body)
    end
    n = n + 1
  end
end

function request()
  -- Past the end only if more connections were in flight than the reserve: repeat the last.
  started = started or clock()
  sent = math.min(sent + 1, #mine)
  return mine[sent]
end

function response(status, headers, body)
  -- Stop before the reserve runs out, so that every request still sent is a new one; wrk
  -- then reports the rate over the time it actually ran.
  if sent >= #mine - reserve and not stopped then
    stopped = clock()
    wrk.thread:stop()
  end
end

function done(summary, latency, requests)
  -- wrk divides by its whole duration even when the threads stopped early: say how long
  -- they really ran, from the first request sent to the last thread's stop.
  local first, last = nil, 0
  for _, thread in ipairs(threads) do
    local began, ended = thread:get("started"), thread:get("stopped")
    if not ended then
      return
    end
    first = math.min(first or began, began)
    last = math.max(last, ended)
  end
  io.write(string.format("Used up after: %.3f s\n", last - first))
end
