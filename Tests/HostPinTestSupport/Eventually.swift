/// Whether `condition` holds within `timeout`: asked at once, then every `interval`, and once more at the
/// deadline (the caller's expectation then reports what was seen). For tests that wait for something
/// another thread or process does, without assuming how long it takes on a loaded machine.
public func eventually(within timeout: Duration, every interval: Duration = .milliseconds(20),
                       _ condition: () async throws -> Bool) async rethrows -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try? await Task.sleep(for: interval)
    }
    return try await condition()
}
