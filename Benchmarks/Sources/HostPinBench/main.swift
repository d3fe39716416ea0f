import Foundation

// HostPinBench SUBCOMMAND [--option value]...: one measurement per line, `RESULT <id> <value>`.
// Benchmarks/run calls it round after round, alternating with the peer it is compared against.
let arguments = CommandLine.arguments.dropFirst()
guard let command = arguments.first else {
    fail("usage: HostPinBench cache|parse|dnsprobe|http|memory|refresh [--option value]...")
}
let options = Options(arguments.dropFirst())
switch command {
case "cache": await CacheBench.run(options)
case "parse": ParseBench.run(options)
case "dnsprobe": DNSProbe.run(options)
case "http": await HTTPBench.run(options)
case "memory": await MemoryBench.run(options)
case "refresh": await RefreshBench.run(options)
default: fail("unknown subcommand '\(command)'")
}
