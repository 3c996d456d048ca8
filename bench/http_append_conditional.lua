-- wrk script of bench/_conditional.py: appends of one event to N journals, each journal's seqNrs
-- tracked, conditional (If-Match: "<its seqNr>", If-None-Match: * for its first) or not.
--
--   wrk -t1 -cC -dS -s bench/http_append_conditional.lua URL -- TOPIC PREFIX N PAYLOAD_BYTES MODE
--
-- MODE is "conditional" or "unconditional"; both send the same seqNrs, so they differ only in the
-- condition headers. A journal is reused only once its previous append was answered (at most one
-- append in flight per journal), so every conditional append holds. wrk does not say which
-- connection a response belongs to, so journal j's seqNrs start at j * STRIDE + 1: the answer's
-- "from" names the journal and its new seqNr. done() prints "bench.*" lines for the Python side,
-- which fails the run on any non-2xx answer (a 412 included) or socket error.

local STRIDE = 1000000000

local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

local request_format, body_format, conditional
local free = {} -- journals with no append in flight, oldest first
local free_first, free_last = 1, 0
local seq_nrs = {} -- journal -> its seqNr (0: not written yet)
local journals = 0
bad = 0
sample = ""

local function release(journal)
  free_last = free_last + 1
  free[free_last] = journal
end

local function acquire()
  if free_first > free_last then
    -- only after a failed append, whose journal is never released (the run fails): a new one
    seq_nrs[journals] = 0
    journals = journals + 1
    return journals - 1
  end
  local journal = free[free_first]
  free[free_first] = nil
  free_first = free_first + 1
  return journal
end

function init(args)
  local topic, prefix, count, size = args[1], args[2], tonumber(args[3]), tonumber(args[4])
  conditional = args[5] == "conditional"
  request_format = "POST /v1/journals/" .. topic .. "/" .. prefix .. "-%d/events HTTP/1.1\r\n"
    .. "Host: " .. wrk.headers["Host"] .. "\r\n%s"
    .. "Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
  body_format = '{"events":[{"seqNr":%d,"payload":{"n":%d,"pad":"'
    .. string.rep("x", math.max(0, size - 20))
    .. '"}}]}'
  journals = count
  for journal = 0, count - 1 do
    seq_nrs[journal] = 0
    release(journal)
  end
end

function request()
  local journal = acquire()
  local current = seq_nrs[journal]
  local next_seq_nr = current + 1
  local condition = ""
  if current == 0 then
    next_seq_nr = journal * STRIDE + 1
    if conditional then
      condition = "If-None-Match: *\r\n"
    end
  elseif conditional then
    condition = 'If-Match: "' .. current .. '"\r\n'
  end
  local body = string.format(body_format, next_seq_nr, next_seq_nr)
  return string.format(request_format, journal, condition, #body, body)
end

local function record_failure(status, body)
  bad = bad + 1
  if sample == "" then
    sample = status .. " " .. string.gsub(string.sub(body, 1, 300), "%s+", " ")
  end
end

function response(status, _, body)
  local from = tonumber(string.match(body, '"from":(%d+)') or "")
  if status < 200 or status > 299 or from == nil then
    record_failure(status, body)
    return
  end
  local journal = math.floor((from - 1) / STRIDE)
  seq_nrs[journal] = from
  release(journal)
end

function done(summary, latency, _)
  local failed, first_failure = 0, ""
  for _, thread in ipairs(threads) do
    failed = failed + thread:get("bad")
    if first_failure == "" then
      first_failure = thread:get("sample")
    end
  end
  local errors = summary.errors
  io.write(string.format("bench.requests %d\n", summary.requests))
  io.write(string.format("bench.duration_us %d\n", summary.duration))
  io.write(string.format("bench.p50_us %d\n", latency:percentile(50)))
  io.write(string.format("bench.p99_us %d\n", latency:percentile(99)))
  io.write(string.format("bench.non_2xx %d\n", failed))
  io.write(
    string.format(
      "bench.socket_errors connect %d, read %d, write %d, timeout %d\n",
      errors.connect,
      errors.read,
      errors.write,
      errors.timeout
    )
  )
  io.write("bench.first_failure " .. first_failure .. "\n")
end
