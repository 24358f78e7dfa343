-- wrk's request generator for bench/drivers/store-driver.mjs. The environment picks the load:
--   OP=put     PUT /o/<KEY_PREFIX><run>/<n>, a BODY_SIZE-byte body (default 1024), a new key each time
--   OP=get     GET one of the seeded 1 KiB keys d/00/000 .. d/99/099, at random
--   OP=head    HEAD of the same keys
--   OP=getbig  GET one of the seeded 1 MiB keys big/0 .. big/63
--   OP=list    GET /list of one seeded prefix d/NN/ (100 keys each), limit 100
local op = os.getenv("OP") or "get"
local body_size = tonumber(os.getenv("BODY_SIZE") or "1024")
math.randomseed(os.time() + math.floor(os.clock() * 1000000))
local run = (os.getenv("KEY_PREFIX") or "put/") .. os.time() .. "-" .. math.random(1, 1000000000) .. "/"
local body = nil
if op == "put" then body = string.rep("a", body_size) end
local count = 0

local function seeded_key()
  return string.format("d/%02d/%03d", math.random(0, 99), math.random(0, 99))
end

request = function()
  count = count + 1
  if op == "put" then return wrk.format("PUT", "/o/" .. run .. count, nil, body) end
  if op == "head" then return wrk.format("HEAD", "/o/" .. seeded_key()) end
  if op == "getbig" then return wrk.format("GET", "/o/big/" .. math.random(0, 63)) end
  if op == "list" then return wrk.format("GET", string.format("/list?prefix=d/%02d/&limit=100", math.random(0, 99))) end
  return wrk.format("GET", "/o/" .. seeded_key())
end
