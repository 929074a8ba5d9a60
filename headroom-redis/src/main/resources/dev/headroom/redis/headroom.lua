-- Headroom decision script: the algorithms of dev.headroom.internal (Gcra, FixedWindow,
-- SlidingWindow, Concurrency), exactly as the in-memory store applies them, for every policy of
-- one request in one call. See dev.headroom.redis.internal.DecisionScript for the argument layout
-- and RedisStore's class comment for the arithmetic.
--
-- Exact integers in IEEE doubles. Lua numbers are doubles, exact only below 2^53; epoch
-- nanoseconds (about 1.8e18) and windows of more than 104 days in nanoseconds are not. So every
-- time and duration here is a pair (s, n) = s * 10^9 + n nanoseconds with 0 <= n < 10^9 and s a
-- whole number of seconds (negative for negative values), and every operation on pairs is exact:
-- seconds stay below 10^10 and nanoseconds below 2^53 in every intermediate sum or product.
-- Times saturate at Java's Long.MAX_VALUE, as dev.headroom.internal.Saturating does. Unit counts
-- (quota, cost, window counters) are plain numbers, exact below 2^53; counters saturate at 2^53.

local E9 = 1000000000
local MAXS, MAXN = 9223372036, 854775807 -- Long.MAX_VALUE as (s, n)
local MAXC = 9007199254740992 -- 2^53: the ceiling of a window counter
local HINT = E9 -- Concurrency.HINT_NANOS

-- The library's code runs once, when Redis loads it, and sees then only redis.register_function
-- (no math, no string, no redis.call): the standard functions are bound at the first call.
local floor, ceil, fmt, find, ssub, match, tonumber, ipairs, unpack

-- The state of the call under way, set by decide() at the start of every call.
local call
local nows, nown
local margin

local function bind()
  floor, ceil = math.floor, math.ceil
  fmt, find, ssub, match = string.format, string.find, string.sub, string.match
  tonumber, ipairs, unpack = _G.tonumber, _G.ipairs, _G.unpack
end

-- A whole number as decimal digits. Every value written is whole and below 2^63 (times as
-- (s, n) pairs, counts saturating at 2^53), so the integer conversion is exact, and it avoids the
-- C library's floating-point formatting, the costliest step of a decision after the Redis calls.
local function str(x)
  return fmt('%d', x)
end

-- (s, n) with n brought into [0, 10^9); exact while |n| < 2^53.
local function norm(s, n)
  if n >= E9 or n < 0 then
    local c = floor(n / E9)
    return s + c, n - c * E9
  end
  return s, n
end

local function add(as, an, bs, bn)
  return norm(as + bs, an + bn)
end

local function sub(as, an, bs, bn)
  return norm(as - bs, an - bn)
end

local function lt(as, an, bs, bn)
  return as < bs or (as == bs and an < bn)
end

local function le(as, an, bs, bn)
  return as < bs or (as == bs and an <= bn)
end

local function sat(s, n)
  if s > MAXS or (s == MAXS and n > MAXN) then
    return MAXS, MAXN
  end
  return s, n
end

-- a * (s, n) for a whole a in [0, 2^53) and (s, n) >= 0, saturating at Long.MAX_VALUE.
local function tmul(a, s, n)
  if a == 0 then
    return 0, 0
  end
  if a == 1 then
    return s, n
  end
  local sec = a * s
  if sec >= 1e10 then
    return MAXS, MAXN -- the exact product is at least this large, whatever the rounding
  end
  local a1 = floor(a / E9)
  local a0 = a - a1 * E9
  sec = sec + a1 * n -- a1 * n < 9.1e15: exact
  if sec >= 1e10 then
    return MAXS, MAXN
  end
  local n1 = floor(n / 100000)
  local n0 = n - n1 * 100000
  local p1 = a0 * n1 -- < 10^13, stands for p1 * 10^5 nanoseconds
  local p1s = floor(p1 / 10000)
  local nanos = a0 * n0 + (p1 - p1s * 10000) * 100000 -- < 2 * 10^14
  return sat(norm(sec + p1s, nanos))
end

-- The double nearest to (s, n): s * 10^9 is exact while |s| < 4.6e9, so one rounding, as Java's
-- (double) cast of the same long.
local function tod(s, n)
  return s * E9 + n
end

-- A whole double 0 <= d < 3.6e16 as (s, n), exactly.
local function fromd(d)
  local s = floor(d / E9)
  return norm(s, d - s * E9)
end

-- (k * w, 0) for a window start, saturating; w in whole seconds.
local function wstart(k, ws)
  local s = k * ws
  if s > MAXS then
    return MAXS, MAXN
  end
  return s, 0
end

local function ceildiv(a, b)
  if a <= 0 then
    return 0
  end
  return floor((a - 1) / b) + 1
end

local function capc(x)
  if x > MAXC then
    return MAXC
  end
  return x
end

-- Writes a value that expires at (es, en), or deletes the key when that is not after now.
local function store(key, value, es, en)
  local ds, dn = sub(es, en, nows, nown)
  if ds < 0 or (ds == 0 and dn == 0) then
    call('DEL', key)
    return
  end
  local ms = ds * 1000 + ceil(dn / 1000000) + margin
  call('PSETEX', key, str(ms), value)
end

local function pexpire(key, es, en, atleastms)
  local ds, dn = sub(es, en, nows, nown)
  local ms = ds * 1000 + ceil(dn / 1000000)
  if ms < atleastms then
    ms = atleastms
  end
  if ms <= 0 then
    call('DEL', key)
  else
    call('PEXPIRE', key, str(ms + margin))
  end
end

---------------------------------------------------------------------------------------------------
-- Token bucket as GCRA (dev.headroom.internal.Gcra). State: the TAT as "s:n"; absent = now.
---------------------------------------------------------------------------------------------------

-- The TAT a key holds ("s:n"), or now when it holds none.
local function gcraTat(v)
  if not v then
    return nows, nown, false
  end
  local i = find(v, ':', 1, true)
  return tonumber(ssub(v, 1, i - 1)), tonumber(ssub(v, i + 1)), true
end

local function gcraLoadKey(key)
  return gcraTat(call('GET', key))
end

local function gcraLoad(it)
  return gcraLoadKey(it.key)
end

-- r = min(q, floor((now + tau - max(tat, now)) / T)), clamped at 0; T = (Ts, Tn), tau = (us, un).
local function gcraRemainingOf(q, Ts, Tn, us, un, ts, tn)
  local ms, mn = ts, tn
  if lt(ms, mn, nows, nown) then
    ms, mn = nows, nown
  end
  local hs, hn = add(nows, nown, us, un)
  hs, hn = sub(hs, hn, ms, mn)
  if hs < 0 or (hs == 0 and hn == 0) then
    return 0
  end
  local k = floor(tod(hs, hn) / tod(Ts, Tn))
  if k > q then
    k = q
  end
  local ps, pn = tmul(k, Ts, Tn)
  while k > 0 and lt(hs, hn, ps, pn) do
    k = k - 1
    ps, pn = sub(ps, pn, Ts, Tn)
  end
  while k < q do
    local s2, n2 = add(ps, pn, Ts, Tn)
    if lt(hs, hn, s2, n2) then
      break
    end
    k = k + 1
    ps, pn = s2, n2
  end
  return k
end

local function gcraRemaining(it, ts, tn)
  return gcraRemainingOf(it.q, it.ts, it.tn, it.taus, it.taun, ts, tn)
end

local function gcraReset(ts, tn)
  if le(ts, tn, nows, nown) then
    return 0, 0
  end
  return sub(ts, tn, nows, nown)
end

-- Evaluation: allowed, remaining, reset (s, n), retry (s, n); and the next TAT when allowed.
local function gcraEval(it, cost)
  local ts, tn = gcraLoad(it)
  local e = {}
  if cost <= it.q then
    local bs, bn = ts, tn
    if lt(bs, bn, nows, nown) then
      bs, bn = nows, nown
    end
    local ms, mn = tmul(cost, it.ts, it.tn)
    local xs, xn = add(bs, bn, ms, mn)
    xs, xn = sat(xs, xn)
    local ds, dn = sub(xs, xn, nows, nown)
    if le(ds, dn, it.taus, it.taun) then
      e.allowed = true
      e.nexts, e.nextn = xs, xn
      e.remaining = gcraRemaining(it, xs, xn)
      e.rs, e.rn = gcraReset(xs, xn)
      e.ys, e.yn = 0, 0
      return e
    end
    e.ys, e.yn = sub(ds, dn, it.taus, it.taun)
  else
    e.ys, e.yn = it.ws, 0
  end
  e.allowed = false
  e.remaining = gcraRemaining(it, ts, tn)
  e.rs, e.rn = gcraReset(ts, tn)
  return e
end

local function gcraSave(it, s, n)
  store(it.key, str(s) .. ':' .. str(n), s, n)
end

local function gcraCommit(it, e)
  gcraSave(it, e.nexts, e.nextn)
end

local function gcraCharge(it, cost)
  local ts, tn = gcraLoad(it)
  if lt(ts, tn, nows, nown) then
    ts, tn = nows, nown
  end
  local ms, mn = tmul(cost, it.ts, it.tn)
  local xs, xn = add(ts, tn, ms, mn)
  gcraSave(it, sat(xs, xn))
end

local function gcraRefund(it, cost)
  local ts, tn, present = gcraLoad(it)
  if not present or le(ts, tn, nows, nown) then
    return
  end
  local ms, mn = tmul(cost, it.ts, it.tn)
  local xs, xn = sub(ts, tn, ms, mn)
  if lt(xs, xn, nows, nown) then
    xs, xn = nows, nown
  end
  gcraSave(it, xs, xn)
end

---------------------------------------------------------------------------------------------------
-- Fixed and sliding windows (dev.headroom.internal.FixedWindow, SlidingWindow).
-- State: "index:count:previous"; absent = nothing counted. Windows are whole seconds, so the
-- window index floor(now / w) is floor(now_seconds / w_seconds).
---------------------------------------------------------------------------------------------------

local function winLoad(it)
  local v = call('GET', it.key)
  if not v then
    return nil
  end
  local a, b, c = match(v, '^(%-?%d+):(%d+):(%d+)$')
  return { i = tonumber(a), c = tonumber(b), p = tonumber(c) }
end

local function winSave(it, k, c, p, es, en)
  store(it.key, str(k) .. ':' .. str(c) .. ':' .. str(p), es, en)
end

local function fwRoll(st, k, q)
  if st == nil then
    return 0
  end
  if st.i == k then
    return st.c
  end
  if st.i > k or st.c <= 0 then
    return 0
  end
  local carry = st.c - q * (k - st.i)
  if carry < 0 then
    return 0
  end
  return carry
end

-- windowStart(index + j) - now, with j = max(1, ceil(count / q)) (reset) or as given.
local function fwUntil(k, j, ws)
  local s, n = wstart(k + j, ws)
  return sub(s, n, nows, nown)
end

local function fwJ(c, q)
  local j = ceildiv(c, q)
  if j < 1 then
    return 1
  end
  return j
end

-- FixedWindow.nextQuotaNanos: windowStart(index + max(1, floor(count / q))) - now, the first
-- window that starts with less than q of debt (count < 2^53: floor(c / q) in doubles is exact).
local function fwNext(k, c, q, ws)
  local j = floor(c / q)
  if j < 1 then
    j = 1
  end
  return fwUntil(k, j, ws)
end

local function fwEval(it, cost)
  local q, ws = it.q, it.ws
  local k = floor(nows / ws)
  local c = fwRoll(winLoad(it), k, q)
  local after = capc(c + cost)
  local e = { k = k }
  if cost <= q and after <= q then
    e.allowed = true
    e.count = after
    e.remaining = q - after
    e.rs, e.rn = fwUntil(k, fwJ(after, q), ws)
    e.ns, e.nn = fwNext(k, after, q, ws)
    e.ys, e.yn = 0, 0
    return e
  end
  e.allowed = false
  if cost > q then
    e.ys, e.yn = ws, 0
  else
    e.ys, e.yn = fwUntil(k, ceildiv(after - q, q), ws)
  end
  e.remaining = q - c
  if e.remaining < 0 then
    e.remaining = 0
  end
  e.rs, e.rn = fwUntil(k, fwJ(c, q), ws)
  e.ns, e.nn = fwNext(k, c, q, ws)
  return e
end

local function fwSave(it, k, c)
  local s, n = wstart(k + fwJ(c, it.q), it.ws)
  winSave(it, k, c, 0, s, n)
end

local function fwCommit(it, e)
  fwSave(it, e.k, e.count)
end

local function fwCharge(it, cost)
  local k = floor(nows / it.ws)
  local c = fwRoll(winLoad(it), k, it.q)
  fwSave(it, k, capc(c + cost))
end

local function fwRefund(it, cost)
  local st = winLoad(it)
  if st == nil then
    return
  end
  local k = floor(nows / it.ws)
  local c = fwRoll(st, k, it.q) - cost
  if c < 0 then
    c = 0
  end
  fwSave(it, k, c)
end

-- Sliding window.

local function swRoll(st, k)
  if st == nil then
    return 0, 0
  end
  if st.i == k then
    return st.c, st.p
  end
  if st.i == k - 1 then
    return 0, st.c
  end
  return 0, 0
end

-- floor(previous * (w - e) / w) in doubles, in this order (SlidingWindow.weightedPrevious).
local function wprev(p, ws, es, en)
  if p == 0 then
    return 0
  end
  local rs, rn = sub(ws, 0, es, en)
  return floor(p * tod(rs, rn) / tod(ws, 0))
end

-- SlidingWindow.decayPoint, as (s, n).
local function decay(p, allowance, ws)
  if p <= allowance then
    return 0, 0
  end
  local wd = tod(ws, 0)
  local point = wd - (allowance + 1) * wd / p
  local es, en = fromd(floor(point))
  es, en = add(es, en, 0, 1)
  while lt(es, en, ws, 0) and wprev(p, ws, es, en) > allowance do
    es, en = add(es, en, 0, 1)
  end
  if es < 0 then
    return 0, 0
  end
  if lt(ws, 0, es, en) then
    return ws, 0
  end
  return es, en
end

-- SlidingWindow.resetNanos: the time until the estimate is zero again.
local function swReset(c, p, ws, es, en)
  if c > 0 then
    -- Next window: this window's count decays as the previous one.
    local ls, ln = sub(ws, 0, es, en)
    local ds, dn = decay(c, 0, ws)
    return add(ls, ln, ds, dn)
  end
  local ds, dn = decay(p, 0, ws)
  if lt(es, en, ds, dn) then
    return sub(ds, dn, es, en)
  end
  return 0, 0
end

-- SlidingWindow.nextQuotaNanos: the time until the estimate is at most min(estimate, q) - 1 with
-- no further traffic (draft-10 and -11's t), found as Retry-After is: in this window as the
-- previous window's weight decays when this window's count alone is within it, else in the next.
local function swNext(c, p, q, ws, es, en)
  local est = capc(wprev(p, ws, es, en) + c)
  if est == 0 then
    return 0, 0
  end
  local allowance = est
  if allowance > q then
    allowance = q
  end
  allowance = allowance - 1
  if c <= allowance then
    local ds, dn = decay(p, allowance - c, ws)
    local ys, yn = sub(ds, dn, es, en)
    if lt(ys, yn, 0, 1) then
      return 0, 1
    end
    return ys, yn
  end
  local ls, ln = sub(ws, 0, es, en)
  local ds, dn = decay(c, allowance, ws)
  return add(ls, ln, ds, dn)
end

local function swEval(it, cost)
  local q, ws = it.q, it.ws
  local k = floor(nows / ws)
  local es, en = nows - k * ws, nown
  local c, p = swRoll(winLoad(it), k)
  local est = capc(wprev(p, ws, es, en) + c)
  local after = capc(est + cost)
  local e = { k = k, p = p }
  if cost <= q and after <= q then
    e.allowed = true
    e.count = c + cost
    e.remaining = q - after
    e.rs, e.rn = swReset(e.count, p, ws, es, en)
    e.ns, e.nn = swNext(e.count, p, q, ws, es, en)
    e.ys, e.yn = 0, 0
    return e
  end
  e.allowed = false
  local ys, yn
  if cost > q then
    ys, yn = ws, 0
  elseif capc(c + cost) <= q then
    local ds, dn = decay(p, q - c - cost, ws)
    ys, yn = sub(ds, dn, es, en)
  else
    local ds, dn = decay(c, q - cost, ws)
    local ls, ln = sub(ws, 0, es, en)
    ys, yn = add(ls, ln, ds, dn)
  end
  if lt(ys, yn, 0, 1) then
    ys, yn = 0, 1
  end
  e.ys, e.yn = ys, yn
  e.remaining = q - est
  if e.remaining < 0 then
    e.remaining = 0
  end
  e.rs, e.rn = swReset(c, p, ws, es, en)
  e.ns, e.nn = swNext(c, p, q, ws, es, en)
  return e
end

local function swSave(it, k, c, p)
  local j = 1
  if c > 0 then
    j = 2
  end
  local s, n = wstart(k + j, it.ws)
  winSave(it, k, c, p, s, n)
end

local function swCommit(it, e)
  swSave(it, e.k, e.count, e.p)
end

local function swCharge(it, cost)
  local k = floor(nows / it.ws)
  local c, p = swRoll(winLoad(it), k)
  swSave(it, k, capc(c + cost), p)
end

local function swRefund(it, cost)
  local st = winLoad(it)
  if st == nil then
    return
  end
  local k = floor(nows / it.ws)
  local c, p = swRoll(st, k)
  c = c - cost
  if c < 0 then
    c = 0
  end
  swSave(it, k, c, p)
end

---------------------------------------------------------------------------------------------------
-- Concurrency leases (dev.headroom.internal.Concurrency). Two keys with the same hash tag:
--   Z, a sorted set of live leases: score = expiry seconds, member = "%09d nanos:id:units"
--     (zero-padded, so that members of one score sort by expiry);
--   H, a hash: "h" = units held, "s" = last lease id, "i<id>" = the lease's member in Z.
-- Lease ids start from Redis time in microseconds when H is new, so that an id is never reused
-- while a holder may still release it.
---------------------------------------------------------------------------------------------------

local function parseMember(m)
  local a, b, c = match(m, '^(%d+):(%d+):(%d+)$')
  return tonumber(a), b, tonumber(c)
end

-- Drops the leases expired at now (expiry <= now); returns units held.
local function cPrune(it)
  local held = tonumber(call('HGET', it.hkey, 'h') or '0')
  if held == 0 then
    return 0
  end
  if call('EXISTS', it.key) == 0 then
    -- The set expired with its last lease: nothing is held; keep only the lease id sequence.
    local seq = call('HGET', it.hkey, 's')
    call('DEL', it.hkey)
    if seq then
      call('HSET', it.hkey, 's', seq)
    end
    return 0
  end
  local rows = call('ZRANGEBYSCORE', it.key, '-inf', str(nows), 'WITHSCORES')
  local gone = 0
  for i = 1, #rows, 2 do
    local m = rows[i]
    local score = tonumber(rows[i + 1])
    local n, id, units = parseMember(m)
    if score < nows or n <= nown then
      call('ZREM', it.key, m)
      call('HDEL', it.hkey, 'i' .. id)
      held = held - units
      gone = gone + 1
    end
  end
  if gone > 0 then
    call('HSET', it.hkey, 'h', str(held))
  end
  return held
end

local function cEarliest(it)
  local r = call('ZRANGE', it.key, 0, 0, 'WITHSCORES')
  local n = parseMember(r[1])
  return tonumber(r[2]), n
end

local function cHint(it, held)
  if held == 0 then
    return 0, 0
  end
  local s, n = cEarliest(it)
  local ds, dn = sub(s, n, nows, nown)
  if lt(0, HINT, ds, dn) then
    return 0, HINT
  end
  if lt(ds, dn, 0, 1) then
    return 0, 1
  end
  return ds, dn
end

-- Sets both keys to expire with the latest lease; H lives at least one lease timeout more.
local function cExpire(it)
  local r = call('ZRANGE', it.key, -1, -1, 'WITHSCORES')
  local lts, ltn = it.lts, it.ltn
  local atleast = lts * 1000 + ceil(ltn / 1000000)
  if #r == 0 then
    call('DEL', it.key)
    pexpire(it.hkey, nows, nown, atleast)
    return
  end
  local n = parseMember(r[1])
  local s = tonumber(r[2])
  pexpire(it.key, s, n, 1)
  pexpire(it.hkey, s, n, atleast)
end

local function cEval(it, cost)
  local q = it.q
  local held = cPrune(it)
  local e = { held = held }
  if cost <= q and held + cost <= q then
    e.allowed = true
    e.remaining = q - held - cost
    e.ys, e.yn = 0, 0
    if cost == 0 then
      e.rs, e.rn = cHint(it, held)
    end
    return e
  end
  e.allowed = false
  e.remaining = q - held
  e.rs, e.rn = cHint(it, held)
  if cost > q then
    e.ys, e.yn = it.lts, it.ltn
  else
    e.ys, e.yn = e.rs, e.rn
  end
  return e
end

local function cCommit(it, e, cost)
  if cost == 0 then
    e.lease = 0
    return
  end
  local us = nows * 1000000 + floor(nown / 1000)
  local seq = tonumber(call('HGET', it.hkey, 's') or '0')
  if seq < us then
    seq = us
  end
  local id = seq + 1
  local xs, xn = add(nows, nown, it.lts, it.ltn)
  xs, xn = sat(xs, xn)
  local member = fmt('%09d', xn) .. ':' .. str(id) .. ':' .. str(cost)
  call('ZADD', it.key, str(xs), member)
  call('HSET', it.hkey, 'h', str(e.held + cost), 's', str(id), 'i' .. str(id), member)
  e.lease = id
  e.rs, e.rn = cHint(it, e.held + cost)
  cExpire(it)
end

local function cRelease(it, id)
  local m = call('HGET', it.hkey, 'i' .. id)
  if m then
    local _, _, units = parseMember(m)
    call('HDEL', it.hkey, 'i' .. id)
    if call('ZREM', it.key, m) == 1 then
      local held = tonumber(call('HGET', it.hkey, 'h') or '0') - units
      call('HSET', it.hkey, 'h', str(held))
    end
  end
  cPrune(it)
  if call('EXISTS', it.hkey) == 1 then
    cExpire(it)
  end
end

---------------------------------------------------------------------------------------------------
-- Dispatch.
---------------------------------------------------------------------------------------------------

local EVAL = { g = gcraEval, f = fwEval, s = swEval, c = cEval }
local COMMIT = { g = gcraCommit, f = fwCommit, s = swCommit, c = cCommit }
local CHARGE = { g = gcraCharge, f = fwCharge, s = swCharge }
local REFUND = { g = gcraRefund, f = fwRefund, s = swRefund }

-- Items: 8 arguments each from argv[5]: algorithm, q, cost, a, b, c, d, e.
local function parseItems(keys, argv)
  local items = {}
  local ki = 1
  local ai = 5
  local n = #argv
  while ai <= n do
    local it = { alg = argv[ai], q = tonumber(argv[ai + 1]), cost = tonumber(argv[ai + 2]) }
    local a, b, c, d, x = tonumber(argv[ai + 3]), tonumber(argv[ai + 4]), tonumber(argv[ai + 5]),
      tonumber(argv[ai + 6]), argv[ai + 7]
    it.key = keys[ki]
    ki = ki + 1
    if it.alg == 'g' then
      it.ts, it.tn, it.taus, it.taun, it.ws = a, b, c, d, tonumber(x)
    elseif it.alg == 'c' then
      it.hkey = keys[ki]
      ki = ki + 1
      it.lts, it.ltn, it.lease = a, b, x
    else
      it.ws = a
    end
    items[#items + 1] = it
    ai = ai + 8
  end
  return items
end

-- The state before (or after giving back): reported as allowed, nothing consumed.
local function unconsumed(it)
  local e = EVAL[it.alg](it, 0)
  e.allowed = true
  e.ys, e.yn = 0, 0
  e.lease = 0
  return e
end

local function push(out, e)
  local n = #out
  out[n + 1] = e.allowed and 1 or 0
  out[n + 2] = e.remaining
  out[n + 3] = e.rs
  out[n + 4] = e.rn
  out[n + 5] = e.ys
  out[n + 6] = e.yn
  out[n + 7] = e.lease or 0
  -- The time until more quota is available: the windows compute it; for a token bucket and a
  -- concurrency policy it is sent as the reset (DecisionScript derives the token bucket's).
  out[n + 8] = e.ns or e.rs
  out[n + 9] = e.nn or e.rn
end

-- A whole 0 <= v < 2^53 nanoseconds as (s, n), exactly.
local function split(v)
  local s = floor(v / E9)
  local n = v - s * E9
  if n < 0 then
    return s - 1, n + E9
  elseif n >= E9 then
    return s + 1, n - E9
  end
  return s, n
end

-- Gcra.remaining from h = now + tau - max(tat, now) < 2^53: min(q, floor(h / T)), 0 when h <= 0.
local function remainingOfHeadroom(q, T, h)
  if h <= 0 then
    return 0
  end
  local k = floor(h / T) -- off by at most one: corrected with exact products (k T <= h + T < 2^53)
  if k * T > h then
    k = k - 1
  elseif (k + 1) * T <= h then
    k = k + 1
  end
  if k > q then
    return q
  end
  return k
end

-- Beyond these (seconds), the fast path's single numbers would not be exact: 4e6 s of tau or of
-- distance between TAT and now is 4e15 ns, so every sum below stays under 2^53 (9.007e15); and
-- before 9e9 s no time here comes near Long.MAX_VALUE, so nothing saturates.
local FAST_SPAN = 4000000
local FAST_NOW = 9000000000

-- One token-bucket policy, acquired: gcraEval and gcraCommit without the tables (most requests
-- of a hot route are exactly this). When tau and the TAT are within FAST_SPAN of now, times are
-- single numbers of nanoseconds relative to now, exact below 2^53; otherwise the (s, n) pairs.
-- Its arguments (argv 6 to 12 of such a request), parsed: a batch across keys parses them once per
-- distinct argument list, not once per request; 8 and 9 are T and tau in nanoseconds, the fast
-- path's (exact when tau is under FAST_SPAN).
local function gcraParams(argv)
  local Ts, Tn, us, un = tonumber(argv[8]), tonumber(argv[9]), tonumber(argv[10]), tonumber(argv[11])
  return { tonumber(argv[6]), tonumber(argv[7]), Ts, Tn, us, un, tonumber(argv[12]), Ts * E9 + Tn, us * E9 + un }
end

-- A batch's reply to one token-bucket acquisition, in its short forms (the fast path, where every
-- duration is a whole number of nanoseconds below 2^53): ADMITTED, r, t; REFUSED, r, t,
-- Retry-After; t and Retry-After in nanoseconds. Any other reply is its length, then the reply.
-- DecisionScript.split reads both.
local ADMITTED, REFUSED = -1, -2

-- Appends a reply (flag, then the 9 fields of one acquisition) after its length at out[o + 1];
-- the time until more quota is sent as the reset, from which DecisionScript derives it.
local function full(out, o, allowed, r, rs, rn, ys, yn)
  out[o + 1], out[o + 2], out[o + 3], out[o + 4] = 10, allowed, allowed, r
  out[o + 5], out[o + 6], out[o + 7], out[o + 8], out[o + 9] = rs, rn, ys, yn, 0
  out[o + 10], out[o + 11] = rs, rn
  return o + 11
end

-- One acquisition decided against the TAT (ts, tn) read from the key, its reply written into a
-- batch's answer after out[o] (a short form on the fast path): the new end of the answer, and the
-- new TAT when it was admitted (nil when refused). Writes nothing to Redis: the caller stores the
-- TAT.
local function gcraInto(out, o, ts, tn, p)
  local q, cost = p[1], p[2]
  local rel = ts - nows
  if p[5] < FAST_SPAN and rel < FAST_SPAN and rel > -FAST_SPAN and nows < FAST_NOW then
    local T, tau = p[8], p[9]
    local d = rel * E9 + (tn - nown) -- tat - now
    if d < 0 then
      d = 0 -- max(tat, now) - now; also Gcra.resetNanos
    end
    if cost <= q then
      local x = d + cost * T -- newTat - now; cost T <= q T = tau
      if x <= tau then
        local a, b = split(nown + x)
        out[o + 1], out[o + 2], out[o + 3] = ADMITTED, remainingOfHeadroom(q, T, tau - x), x
        return o + 3, nows + a, b
      end
      out[o + 1], out[o + 2], out[o + 3], out[o + 4] = REFUSED, remainingOfHeadroom(q, T, tau - d), d, x - tau
      return o + 4
    end
    local rs, rn = split(d)
    return full(out, o, 0, remainingOfHeadroom(q, T, tau - d), rs, rn, p[7], 0)
  end
  local Ts, Tn, us, un = p[3], p[4], p[5], p[6]
  local ys, yn
  if cost <= q then
    local bs, bn = ts, tn
    if lt(bs, bn, nows, nown) then
      bs, bn = nows, nown
    end
    local xs, xn = sat(add(bs, bn, tmul(cost, Ts, Tn)))
    local ds, dn = sub(xs, xn, nows, nown)
    if le(ds, dn, us, un) then
      local rs, rn = gcraReset(xs, xn)
      return full(out, o, 1, gcraRemainingOf(q, Ts, Tn, us, un, xs, xn), rs, rn, 0, 0), xs, xn
    end
    ys, yn = sub(ds, dn, us, un)
  else
    ys, yn = p[7], 0
  end
  local rs, rn = gcraReset(ts, tn)
  return full(out, o, 0, gcraRemainingOf(q, Ts, Tn, us, un, ts, tn), rs, rn, ys, yn)
end

-- gcraInto's reply as a single call answers it (flag, then the 9 fields), and the new TAT.
local function gcraStep(ts, tn, p)
  local r = {}
  local _, xs, xn = gcraInto(r, 0, ts, tn, p)
  local form = r[1]
  if form == ADMITTED then
    local rs, rn = split(r[3])
    return { 1, 1, r[2], rs, rn, 0, 0, 0, rs, rn }, xs, xn
  elseif form == REFUSED then
    local rs, rn = split(r[3])
    local ys, yn = split(r[4])
    return { 0, 0, r[2], rs, rn, ys, yn, 0, rs, rn }
  end
  return { unpack(r, 2, 11) }, xs, xn
end

local function storeTat(key, xs, xn)
  store(key, fmt('%d:%d', xs, xn), xs, xn)
end

local function acquireOneGcraWith(key, p)
  local ts, tn = gcraLoadKey(key)
  local reply, xs, xn = gcraStep(ts, tn, p)
  if xs ~= nil then
    storeTat(key, xs, xn)
  end
  return reply
end

local function acquireOneGcra(key, argv)
  return acquireOneGcraWith(key, gcraParams(argv))
end

-- During a batch: the values of the plain keys its earlier calls read or wrote, so that n calls
-- on one key read it from Redis once. Writes go through to Redis and to this table; a DEL is
-- remembered as MISSING, any other command on a key as UNKNOWN (read it again). A key absent
-- from the table was not touched by the batch yet (what decideAcross's prefetch relies on). Set
-- and cleared by decide for each top-level call, so that a batch that failed half-way leaves
-- nothing behind.
local cache = nil
local MISSING, UNKNOWN = {}, {}

local function cachedCall(cmd, key, ...)
  if cmd == 'GET' then
    local v = cache[key]
    if v == nil or v == UNKNOWN then
      v = redis.call('GET', key)
      cache[key] = v == false and MISSING or v
      return v
    end
    if v == MISSING then
      return false
    end
    return v
  end
  local r = redis.call(cmd, key, ...)
  if key ~= nil then
    if cmd == 'PSETEX' then
      local _, value = ...
      cache[key] = value
    elseif cmd == 'DEL' then
      cache[key] = MISSING
    else
      cache[key] = UNKNOWN
    end
  end
  return r
end

-- Whether a request's argv is one token-bucket acquisition (acquireOneGcra's case).
local function oneGcra(argv)
  return argv[1] == 'a' and argv[5] == 'g' and #argv == 12
end

-- One request: keys and argv as DecisionScript lays them out; answers as it documents.
local function decideOne(keys, argv)
  if floor == nil then
    bind()
  end
  call = cache and cachedCall or redis.call
  margin = tonumber(argv[4])
  -- The clock: the caller's test ticker when given, else Redis TIME (never the caller's clock).
  if argv[2] ~= '' then
    nows, nown = tonumber(argv[2]), tonumber(argv[3])
  else
    local t = call('TIME')
    nows, nown = tonumber(t[1]), tonumber(t[2]) * 1000
  end
  local mode = argv[1]

  if oneGcra(argv) then
    return acquireOneGcra(keys[1], argv)
  end

  local items = parseItems(keys, argv)
  local out = {}

  if mode == 'a' then
    -- All or nothing: evaluate every policy, then commit all of them or none.
    local evals = {}
    local all = true
    for i, it in ipairs(items) do
      evals[i] = EVAL[it.alg](it, it.cost)
      all = all and evals[i].allowed
    end
    out[1] = all and 1 or 0
    for i, it in ipairs(items) do
      local e = evals[i]
      if all then
        COMMIT[it.alg](it, e, it.cost)
      elseif e.allowed then
        -- Not consumed: report the state before the request, as a cost-0 evaluation.
        e = unconsumed(it)
      end
      push(out, e)
    end
    return out
  end

  if mode == 'c' then
    for _, it in ipairs(items) do
      local f = CHARGE[it.alg]
      if f then
        f(it, it.cost)
      end
    end
    return { 1 }
  end

  if mode == 'r' then
    -- Gives back: refunds units, or releases the lease given; answers with the state after it.
    out[1] = 1
    for _, it in ipairs(items) do
      if it.alg == 'c' then
        if it.lease ~= '0' then
          cRelease(it, it.lease)
        end
      else
        REFUND[it.alg](it, it.cost)
      end
      push(out, unconsumed(it))
    end
    return out
  end

  return redis.error_reply('headroom: unknown mode ' .. tostring(mode))
end

-- Whether two argument lists are the same request (Redis Lua strings are interned: each
-- comparison is one pointer test).
local function same(a, b)
  if b == nil or #a ~= #b then
    return false
  end
  for i = 1, #a do
    if a[i] ~= b[i] then
      return false
    end
  end
  return true
end

-- A refusal of an acquisition (mode a) leaves the state as it found it (nothing is committed;
-- concurrency's pruning of leases expired at now is idempotent at one now). So the same request
-- at the same instant, asked again right after a refusal, meets the same state and gets the same
-- refusal: the batch modes answer it without evaluating it again. This is what makes a batch of
-- n identical requests on a hot key cost (admitted + 1) evaluations instead of n, and it is
-- exactly what n evaluations would give.
local function refusal(sub, reply)
  return sub[1] == 'a' and reply[1] == 0
end

-- The TIME of a batch, read once: its calls are decided at the same instant, one after another,
-- as calls arriving together would be.
local function batchTime(t)
  if t == nil then
    t = redis.call('TIME')
    t = { tonumber(t[1]), tonumber(t[2]) * 1000 }
  end
  return t
end

-- Appends a reply to a batch's answer, after its length.
local function append(out, reply)
  local m = #out
  out[m + 1] = #reply
  for j = 1, #reply do
    out[m + 1 + j] = reply[j]
  end
end

-- A batch (mode b): n requests on the same keys decided one after another, each exactly as its
-- own call would have been (its own all-or-nothing commit), and answered in order, each reply
-- after its length. Keys they read are read from Redis once per batch (cachedCall); Redis TIME is
-- read once (batchTime). A request equal to the one before it, which was refused, is refused
-- alike (see refusal).
local function decideBatch(keys, argv)
  cache = {}
  local n = tonumber(argv[2])
  local at = 3
  local out = {}
  local t = nil
  local prev, prevReply = nil, nil
  for _ = 1, n do
    local len = tonumber(argv[at])
    local sub = {}
    for j = 1, len do
      sub[j] = argv[at + j]
    end
    at = at + len + 1
    local reply
    if prevReply ~= nil and same(sub, prev) then
      reply = prevReply
    else
      prev = sub
      if sub[2] == '' then
        local timed = {}
        for j = 1, len do
          timed[j] = sub[j]
        end
        t = batchTime(t)
        timed[2], timed[3] = t[1], t[2]
        sub = timed
      end
      reply = decideOne(keys, sub)
      if type(reply) ~= 'table' or reply.err then
        cache = nil
        return reply
      end
      prevReply = refusal(sub, reply) and reply or nil
    end
    append(out, reply)
  end
  cache = nil
  return out
end

-- Reads the string keys (token buckets' and windows' state) of a batch across keys with one MGET
-- per 1,000 keys instead of one GET each: within one call nothing else runs and Redis expires keys
-- by the time the call began, so the values stay what each GET would read until the batch touches
-- the key (cachedCall). Returns the values by position in KEYS (false: absent; nil: not read, a
-- concurrency policy's key); a list decided by decideOne finds its keys' values in the cache.
local function prefetch(keys, lists, order)
  local plain = true
  for i = 1, #lists do
    plain = plain and lists[i].plain
  end
  local at
  if not plain then
    at = {}
    local k = 1
    for i = 1, #order do
      local list = order[i]
      if list.plain then
        for j = k, k + list.kc - 1 do
          at[#at + 1] = j
        end
      end
      k = k + list.kc
    end
  end
  local count = at and #at or #keys
  local values
  if plain and count <= 1000 then
    values = redis.call('MGET', unpack(keys)) -- the common case: every key, in order
  else
    values = {}
    for a = 1, count, 1000 do
      local b = a + 999
      if b > count then
        b = count
      end
      local want = {}
      for j = a, b do
        want[j - a + 1] = keys[at and at[j] or j]
      end
      local got = redis.call('MGET', unpack(want))
      for j = a, b do
        values[at and at[j] or j] = got[j - a + 1]
      end
    end
  end
  local k = 1
  for i = 1, #order do
    local list = order[i]
    if list.plain and not list.gcra then
      for j = k, k + list.kc - 1 do
        local v = values[j]
        cache[keys[j]] = v == false and MISSING or v
      end
    end
    k = k + list.kc
  end
  return values
end

-- A batch across keys (mode m, standalone Redis only): n requests on any keys, decided and
-- answered as a batch. The requests of a busy route differ only in their keys, so each distinct
-- argument list is sent once: ARGV 1 m, 2 n, 3 u, then u lists, each as its number of keys, its
-- length and its ARGV, then, when u > 1, n indexes (from 1), one per request, of the list it uses;
-- KEYS holds every request's keys one after another. A list is read into a table, given the
-- batch's TIME and (for one token-bucket acquisition, the common case) parsed once, however many
-- requests use it; such a request reads its key from the prefetched values, and is answered in a
-- short form (gcraInto).
local function decideAcross(keys, argv)
  cache = {}
  local n, u = tonumber(argv[2]), tonumber(argv[3])
  local at = 4
  local lists = {}
  local t = nil
  for i = 1, u do
    local kc, len = tonumber(argv[at]), tonumber(argv[at + 1])
    local sub = {}
    for j = 1, len do
      sub[j] = argv[at + 1 + j]
    end
    at = at + 2 + len
    if sub[2] == '' then
      t = batchTime(t)
      sub[2], sub[3] = t[1], t[2]
    end
    local list = { kc = kc, argv = sub, plain = true }
    for ai = 5, len, 8 do
      if sub[ai] == 'c' then
        list.plain = false -- a lease hash and sorted set, not string values
      end
    end
    if kc == 1 and oneGcra(sub) then
      list.gcra = gcraParams(sub)
      list.margin, list.nows, list.nown = tonumber(sub[4]), tonumber(sub[2]), tonumber(sub[3])
    end
    lists[i] = list
  end
  local order = {}
  for i = 1, n do
    order[i] = u == 1 and lists[1] or lists[tonumber(argv[at + i - 1])]
  end
  local values = prefetch(keys, lists, order)
  local out = {}
  local o = 0
  local k = 1
  -- The last request's list, first key and reply (out[from + 1] to out[to]) when it was refused.
  local prevList, prevK, from, to = nil, 0, 0, nil
  for i = 1, n do
    local list = order[i]
    local kc = list.kc
    local again = to ~= nil and list == prevList
    if again then
      for j = 0, kc - 1 do
        if keys[k + j] ~= keys[prevK + j] then
          again = false
          break
        end
      end
    end
    if again then
      for j = from + 1, to do
        out[o + j - from] = out[j]
      end
      o = o + to - from
    else
      local start = o
      local refused
      local p = list.gcra
      if p then
        call, margin, nows, nown = cachedCall, list.margin, list.nows, list.nown
        local key = keys[k]
        local v = cache[key]
        if v == nil then
          v = values[k]
        elseif v == MISSING then
          v = false
        elseif v == UNKNOWN then
          v = cachedCall('GET', key)
        end
        local ts, tn = gcraTat(v)
        local xs, xn
        o, xs, xn = gcraInto(out, o, ts, tn, p)
        if xs ~= nil then
          storeTat(key, xs, xn)
        end
        refused = xs == nil
      else
        local subkeys = {}
        for j = 1, kc do
          subkeys[j] = keys[k + j - 1]
        end
        local reply = decideOne(subkeys, list.argv)
        if type(reply) ~= 'table' or reply.err then
          cache = nil
          return reply
        end
        append(out, reply)
        o = #out
        refused = refusal(list.argv, reply)
      end
      prevList, prevK = list, k
      if refused then
        from, to = start, o
      else
        to = nil
      end
    end
    k = k + kc
  end
  cache = nil
  return out
end

-- One call: a request, or a batch of requests on the same keys.
local function decide(keys, argv)
  if floor == nil then
    bind()
  end
  local mode = argv[1]
  -- A batch (mode b): n requests on the same keys, each given by its own argv after its length
  -- (decideBatch). A batch across keys (mode m, standalone Redis only): see decideAcross.
  if mode == 'b' then
    return decideBatch(keys, argv)
  end
  if mode == 'm' then
    return decideAcross(keys, argv)
  end
  -- n copies of one request (mode n: ARGV 1 n, 2 count, then the request's argv), decided one
  -- after another as mode b would; evaluation stops at the first refusal, which every later copy
  -- would repeat (see refusal). Reply: how many replies follow (m), then each after its length;
  -- copies m + 1 to count have the m-th reply.
  if mode == 'n' then
    cache = {}
    local n = tonumber(argv[2])
    local sub = {}
    for j = 3, #argv do
      sub[j - 2] = argv[j]
    end
    if sub[2] == '' then
      local t = batchTime(nil)
      sub[2], sub[3] = t[1], t[2]
    end
    local out = { 0 }
    if oneGcra(sub) then
      -- One token bucket (a hot route's case): the TAT read once, carried from copy to copy in
      -- numbers, and written once, after the last copy admitted. Nothing else runs within the
      -- call, so Redis ends in the state that n reads and writes would have left.
      call, margin = cachedCall, tonumber(sub[4])
      nows, nown = tonumber(sub[2]), tonumber(sub[3])
      local p = gcraParams(sub)
      local ts, tn = gcraLoadKey(keys[1])
      local admitted = false
      local o = 1
      for i = 1, n do
        local xs, xn
        o, xs, xn = gcraInto(out, o, ts, tn, p)
        out[1] = i
        if xs == nil then
          break -- a refusal, which every later copy would repeat
        end
        ts, tn, admitted = xs, xn, true
      end
      if admitted then
        storeTat(keys[1], ts, tn)
      end
      cache = nil
      return out
    end
    for i = 1, n do
      local reply = decideOne(keys, sub)
      if type(reply) ~= 'table' or reply.err then
        cache = nil
        return reply
      end
      append(out, reply)
      out[1] = i
      if refusal(sub, reply) then
        break
      end
    end
    cache = nil
    return out
  end
  cache = nil
  return decideOne(keys, argv)
end
