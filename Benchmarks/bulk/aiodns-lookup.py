#!/usr/bin/env python3
"""Benchmarks/bulk/aiodns-lookup.py NAMES SERVER PORT CONCURRENCY: item 2's aiodns row.

What a Python user would write to resolve a list of names: asyncio, aiodns (c-ares underneath, through
pycares), one A query per name with at most CONCURRENCY in flight (a semaphore), every name once.
Prints the number of names answered with at least one address; failures are counted out, not retried.
"""
import asyncio
import sys

import aiodns


async def main(path, server, port, concurrency):
    with open(path) as f:
        names = [line.strip() for line in f if line.strip()]
    resolver = aiodns.DNSResolver(nameservers=[server], udp_port=port, timeout=2, tries=2)
    limit = asyncio.Semaphore(concurrency)
    answered = 0

    async def one(name):
        nonlocal answered
        async with limit:
            try:
                reply = await resolver.query_dns(name, "A")
            except aiodns.error.DNSError:
                return
            if reply.answer:
                answered += 1

    await asyncio.gather(*(one(name) for name in names))
    print(answered)


asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])))
