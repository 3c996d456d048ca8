-- wrk script of bench/http_append.py and bench/_conditional.py: each request appends one event to
-- one of N journals.
--
--   wrk -t1 -cC -dS -s bench/http_append.lua URL -- TOPIC PREFIX N PAYLOAD_BYTES MODE [TOKENS_FILE]
--
-- A journal is reused only once its previous append was answered, so each journal has at most
-- one append in flight and its seqNrs strictly increase. wrk does not say which connection a
-- response belongs to, so the answer's "from" (the append's first seqNr) must name the journal
-- that is free again. MODE says how:
--
-- * "counter" (bench/http_append.py): seqNrs come from one counter (unique across journals, with
--   gaps within one), and a table of those in flight gives the journal;
-- * "unconditional" or "conditional" (bench/_conditional.py): journal j's seqNrs are consecutive
--   from j * STRIDE + 1, so "from" gives the journal and its new seqNr. Both send the same
--   seqNrs; "conditional" adds If-None-Match: * to a journal's first append and If-Match:
--   "<its seqNr>" to the others, all of which hold.
--
-- With TOKENS_FILE (one bearer token per line), request k carries the k-th token (round robin):
-- one line sends the same token every time, as a client does; many, a new one per request.
-- done() prints "bench.*" lines for the Python side, which fails the run on any non-2xx answer
-- (a 412 included) or socket error.

local STRIDE = 1000000000

local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

local request_format, body_format, mode
local tokens, token_count, token_index = {}, 0, 0
local free = {} -- journals with no append in flight, oldest first
local free_first, free_last = 1, 0
local journals = 0
local seq = 0 -- "counter": the last seqNr sent
local in_flight = {} -- "counter": seqNr -> journal
local seq_nrs = {} -- the other modes: journal -> its seqNr (0: not written yet)
bad = 0
sample = ""

local function release(journal)
  free_last = free_last + 1
  free[free_last] = journal
end

local function acquire()
  if free_first > free_last then
    -- Only after a failed append, whose journal is never released (the run fails): a new one.
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
  mode = args[5]
  if mode ~= "counter" and mode ~= "unconditional" and mode ~= "conditional" then
    error("MODE is counter, unconditional or conditional, not " .. tostring(mode))
  end
  if args[6] then
    for line in io.lines(args[6]) do
      token_count = token_count + 1
      tokens[token_count] = "Authorization: Bearer " .. line .. "\r\n"
    end
  end
  -- written out rather than with wrk.format, which takes wrk's Lua a third more CPU per request
  request_format = "POST /v1/journals/" .. topic .. "/" .. prefix .. "-%d/events HTTP/1.1\r\n"
    .. "Host: " .. wrk.headers["Host"] .. "\r\n%s%s"
    .. "Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
  -- the payload the Python side sends too: {"n": seqNr, "pad": "xxx..."}, about `size` bytes
  body_format = '{"events":[{"seqNr":%d,"payload":{"n":%d,"pad":"'
    .. string.rep("x", math.max(0, size - 20))
    .. '"}}]}'
  journals = count
  for journal = 0, count - 1 do
    seq_nrs[journal] = 0
    release(journal)
  end
end

-- The next append's seqNr for `journal`, and its condition header ("" for none).
local function next_append(journal)
  if mode == "counter" then
    seq = seq + 1
    in_flight[seq] = journal
    return seq, ""
  end
  local current = seq_nrs[journal]
  if current == 0 then
    return journal * STRIDE + 1, mode == "conditional" and "If-None-Match: *\r\n" or ""
  end
  return current + 1, mode == "conditional" and 'If-Match: "' .. current .. '"\r\n' or ""
end

-- The journal of the append answered with `from`, now free again (nil: none in flight).
local function answered(from)
  if mode == "counter" then
    local journal = in_flight[from]
    in_flight[from] = nil
    return journal
  end
  local journal = math.floor((from - 1) / STRIDE)
  seq_nrs[journal] = from
  return journal
end

function request()
  local journal = acquire()
  local seq_nr, condition = next_append(journal)
  local body = string.format(body_format, seq_nr, seq_nr)
  local authorization = ""
  if token_count > 0 then
    authorization = tokens[token_index % token_count + 1]
    token_index = token_index + 1
  end
  return string.format(request_format, journal, condition, authorization, #body, body)
end

local function record_failure(status, body)
  bad = bad + 1
  if sample == "" then
    sample = status .. " " .. string.gsub(string.sub(body, 1, 300), "%s+", " ")
  end
end

function response(status, _, body)
  local from = tonumber(string.match(body, '"from":(%d+)') or "")
  local journal = status >= 200 and status <= 299 and from and answered(from)
  if not journal then
    record_failure(status, body)
    return
  end
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
