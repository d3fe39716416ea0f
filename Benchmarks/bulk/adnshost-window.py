#!/usr/bin/env python3
"""Benchmarks/bulk/adnshost-window.py NAMES WINDOW ADNSHOST-ARGS...: item 2's windowed adnshost row.

`adnshost -a -f` reads names from standard input and sends each query as soon as it reads the line, with
no limit on how many are in flight: a 10 000-line file at once overflows the server's and its own socket
buffers and most names time out. This feeder keeps WINDOW names in flight, the same concurrency as the
other clients: it writes WINDOW names, then one more for each answer (`--fmt-asynch` header line:
`ID NRRS STATUSTYPE ...`). Prints the number of names answered `ok`.
"""
import subprocess
import sys

path, window, command = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
with open(path) as f:
    names = [line.strip() for line in f if line.strip()]
adns = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
sent = answered = done = 0
for name in names[:window]:
    adns.stdin.write((name + "\n").encode())
    sent += 1
adns.stdin.flush()
while done < len(names):
    line = adns.stdout.readline()
    if not line:
        break
    fields = line.split()
    # A header line starts with the query's ID (decimal); answer lines start with the owner name.
    if len(fields) >= 5 and fields[0].isdigit():
        done += 1
        if fields[2] == b"ok":
            answered += 1
        if sent < len(names):
            adns.stdin.write((names[sent] + "\n").encode())
            adns.stdin.flush()
            sent += 1
adns.stdin.close()
adns.wait()
print(answered)
