"""Prints the layout facts of a module file that module-file.mlir checks.

A module file is a size-prefixed FlatBuffer with identifier "SMOD", zero
padding up to the next 64-byte boundary, the external data, then the
integrity record (schemas/integrity.h): a table of parts, each a range of the
module, and a 32-byte footer ending in "SMODSUM1".
"""
import struct
import sys

data = open(sys.argv[1], "rb").read()
print("record:", data[-8:].decode("ascii", "replace"))
count, flags = struct.unpack_from("<II", data, len(data) - 32)
module_length = len(data) - 32 - 40 * count - (64 if flags & 1 else 0)
kinds = ["description", "rodata", "executable", "padding"]
for i in range(count):
    offset, length, kind, index = struct.unpack_from("<QQII", data, module_length + 40 * i)
    print("part: %s %d [%d, %d)" % (kinds[kind], index, offset, offset + length))
data = data[:module_length]
(size,) = struct.unpack_from("<I", data, 0)
flatbuffer_end = 4 + size
external = (flatbuffer_end + 63) // 64 * 64
print("identifier:", data[8:12].decode("ascii", "replace"))
print("zero padding:", all(b == 0 for b in data[flatbuffer_end:external]))
print("external data:", len(data) - external, "bytes")
for offset in map(int, sys.argv[2:]):
    chunk = data[external + offset:external + offset + 8]
    print("external[%d]:" % offset, chunk.hex(" "))
