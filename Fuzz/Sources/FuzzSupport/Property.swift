/// Stops the run when a property of the code under test does not hold, so that libFuzzer keeps the input
/// as a crash (`crash-…`) like any other failure: the message says which property, with the values.
public func property(_ holds: Bool, _ message: @autoclosure () -> String,
                     file: StaticString = #fileID, line: UInt = #line) {
    guard !holds else { return }
    fatalError("property violated: \(message())", file: file, line: line)
}
