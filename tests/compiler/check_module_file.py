"""Prints the layout facts of a module file that module-file.mlir checks.

A module file is a size-prefixed FlatBuffer with identifier "SMOD", zero
padding up to the next 64-byte boundary, then the external data.
"""
import struct
import sys

data = open(sys.argv[1], "rb").read()
(size,) = struct.unpack_from("<I", data, 0)
flatbuffer_end = 4 + size
external = (flatbuffer_end + 63) // 64 * 64
print("identifier:", data[8:12].decode("ascii", "replace"))
print("zero padding:", all(b == 0 for b in data[flatbuffer_end:external]))
print("external data:", len(data) - external, "bytes")
for offset in map(int, sys.argv[2:]):
    chunk = data[external + offset:external + offset + 8]
    print("external[%d]:" % offset, chunk.hex(" "))
