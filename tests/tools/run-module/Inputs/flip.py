"""flip.py IN OUT HEX DELTA: copies IN to OUT with one bit changed, DELTA
bytes after the first occurrence of the bytes HEX (a part of the module found
by its content: b'7f454c46' is the ELF executable, a weight's bytes a
rodata segment)."""
import sys

data = bytearray(open(sys.argv[1], "rb").read())
at = data.index(bytes.fromhex(sys.argv[3])) + int(sys.argv[4])
data[at] ^= 1
open(sys.argv[2], "wb").write(data)
