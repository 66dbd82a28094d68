-- sum 1..n with Lua's own counted loop (numeric for): the idiomatic Lua
-- program, and the faster of the two Lua variants, so the bar is set by it.
-- usage: lua5.4 loop_for.lua N [REPEATS]   prints the result and seconds per run
local n, repeats = tonumber(arg[1]), tonumber(arg[2] or "1")
local function loop(n)
  local sum = 0
  for i = 1, n do
    sum = sum + i
  end
  return sum
end
for _ = 1, repeats do
  local t0 = os.clock()
  local r = loop(n)
  print(r, os.clock() - t0)
end
