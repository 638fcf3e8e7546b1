-- wrk script: POST /v1/optimizations with ORDERS orders (default 10) and a
-- unique Idempotency-Key per request. Env: KEY (API key), ORDERS, NONCE.
local orders = tonumber(os.getenv("ORDERS") or "10")
local key = os.getenv("KEY")
local nonce = os.getenv("NONCE") or tostring(os.time())
local parts = {}
for i = 1, orders do
  parts[#parts + 1] = string.format(
    '{"id":"o%d","latitude":%.5f,"longitude":%.5f,"demand":1,"time_window_start":"09:00","time_window_end":"17:00","customer":"Customer %d","notes":"Leave at the back door"}',
    i, 52.40 + (i % 50) * 0.004, 13.30 + math.floor(i / 50) * 0.01, i)
end
local body = '{"name":"load test","depot":{"latitude":52.52,"longitude":13.405},"orders":['
  .. table.concat(parts, ",") .. '],"fleet":{"count":20,"capacity":100},"options":{"solver_seconds":1}}'

local threads = 0
function setup(thread)
  threads = threads + 1
  thread:set("tid", threads)
end

local counter = 0
function request()
  counter = counter + 1
  return wrk.format("POST", "/v1/optimizations", {
    ["Authorization"] = "Bearer " .. key,
    ["Content-Type"] = "application/json",
    ["Idempotency-Key"] = string.format("bench-%s-%d-%d", nonce, tid, counter),
  }, body)
end
