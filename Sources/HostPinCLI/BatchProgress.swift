import HostPinService

/// The progress line `lookup --batch` shows at the bottom of a terminal's standard error: names done,
/// answered (with addresses) and failed (NXDOMAIN, NODATA, no answer, an invalid line), the rate since the
/// start and, when the input is a regular file, the time left from the part of it read so far:
///
///     hostpin: 1200 names done, 1190 answered, 10 failed, 850 names/s, 0:12 left
///
/// Drawn at most every ``interval`` (a redraw per name would cost more than the names on a fast batch), and
/// only when standard error is a terminal (the caller checks); answers and messages written meanwhile go
/// above it (``Console/showStatus(_:)``). At the end the last count stays as an ordinary line.
struct BatchProgress {
    /// The shortest time between two redraws: four a second.
    static let interval: Duration = .milliseconds(250)

    private let position: ReadPosition
    private let start: ContinuousClock.Instant
    private var shownAt: ContinuousClock.Instant?
    private(set) var done = 0
    private(set) var answered = 0

    init(position: ReadPosition, start: ContinuousClock.Instant = .now) {
        self.position = position
        self.start = start
    }

    /// Counts one name that ended with `status`, and redraws the line when ``interval`` has passed.
    mutating func record(_ status: ExitStatus, now: ContinuousClock.Instant = .now) {
        done += 1
        if status == .success { answered += 1 }
        if let shownAt, now - shownAt < Self.interval { return }
        shownAt = now
        Console.showStatus(line(at: now))
    }

    /// Draws the final count and leaves it on the terminal.
    func finish(now: ContinuousClock.Instant = .now) {
        guard done > 0 else { return }
        Console.showStatus(line(at: now, finished: true))
        Console.keepStatus()
    }

    /// The line as it reads at `now`.
    func line(at now: ContinuousClock.Instant, finished: Bool = false) -> String {
        let elapsed = now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        var parts = ["\(done) names done", "\(answered) answered", "\(done - answered) failed"]
        if seconds >= 0.001 { parts.append("\(Int((Double(done) / seconds).rounded())) names/s") }
        if finished {
            parts.append("\(Self.clock(seconds)) in all")
        } else if seconds >= 1, let fraction = position.fraction, fraction > 0 {
            parts.append("\(Self.clock(seconds * (1 - fraction) / fraction)) left")
        }
        return "hostpin: " + parts.joined(separator: ", ")
    }

    /// `seconds` as `m:ss`, or `h:mm:ss` from an hour.
    static func clock(_ seconds: Double) -> String {
        let total = Int(seconds.rounded())
        let (hours, minutes, rest) = (total / 3600, total / 60 % 60, total % 60)
        let twoDigits = { (value: Int) in value < 10 ? "0\(value)" : "\(value)" }
        return hours > 0 ? "\(hours):\(twoDigits(minutes)):\(twoDigits(rest))" : "\(minutes):\(twoDigits(rest))"
    }
}
