import FuzzSupport
import HostPin

/// The hijack list reader on any text: `HijackList(parsing:source:)` (`--hijack-list`, read the same from
/// a file). Never a crash, and:
/// - a list it refuses names bad lines in order, each a line the text has;
/// - a list it reads holds one entry per line that is neither blank nor a comment, each with a comment
///   and its line number; written back as `RANGE # COMMENT` lines, it reads as the same ranges and
///   comments; and each entry's network address is found in the list, in that entry or an earlier one.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHijackList(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = fuzzInput(data, size)
    let lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).count
    let list: HijackList
    do throws(HijackListError) {
        list = try HijackList(parsing: bytes, source: "fuzz")
    } catch {
        guard case .invalid(_, let problems) = error else {
            property(false, "text is refused as a file: \(error)")
            return 0
        }
        property(!problems.isEmpty && problems.allSatisfy { (1...lines).contains($0.line) }
                 && zip(problems, problems.dropFirst()).allSatisfy { $0.line < $1.line },
                 "\(lines) lines have problems on lines \(problems.map(\.line))")
        _ = error.description
        return 0
    }
    property(list.entries.count <= lines && list.entries.allSatisfy { !$0.comment.isEmpty && $0.line.map { (1...lines).contains($0) } == true },
             "\(lines) lines give \(list.entries)")
    let text = list.entries.map { "\($0.range) # \($0.comment)\n" }.joined()
    do throws(HijackListError) {
        let again = try HijackList(parsing: Array(text.utf8), source: "again")
        property(again.entries.map(\.range) == list.entries.map(\.range) && again.entries.map(\.comment) == list.entries.map(\.comment),
                 "\(list.entries) written as \(text.debugDescription) reads as \(again.entries)")
    } catch {
        property(false, "\(list.entries) written as \(text.debugDescription) is refused: \(error)")
    }
    for (index, entry) in list.entries.enumerated() {
        let found = list.entry(containing: entry.range.network)
        property(found.map { list.entries[...index].contains($0) } == true,
                 "\(entry.range.network) of \(entry) is found in \(String(describing: found))")
    }
    return 0
}
