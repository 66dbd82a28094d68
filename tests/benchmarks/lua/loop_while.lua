-- sum 1..n with a while loop: the same instructions as samples/vm/loop.mlir
-- usage: lua5.4 loop.lua N [REPEATS]   prints the result and seconds per run
local n, repeats = tonumber(arg[1]), tonumber(arg[2] or "1")
local function loop(n)
  local sum, i = 0, 1
  while i <= n do
    sum = sum + i
    i = i + 1
  end
  return sum
end
for _ = 1, repeats do
  local t0 = os.clock()
  local r = loop(n)
  print(r, os.clock() - t0)
end
