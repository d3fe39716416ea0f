import HostPin
import HostPinService

/// Where `lookup` and `compare` take their names from: the arguments, or `--batch FILE|-`.
enum NameSource: Sendable {
    /// The arguments, validated, in command-line order (duplicates kept).
    case names([HostName])
    /// `--batch`: read as the work goes.
    case batch(BatchFeed)

    /// The names of `--batch`'s file when `batch` is given, else of the positional `arguments`.
    ///
    /// - Parameter missing: What ``UsageError/missingArgument(_:)`` names when there is neither.
    /// - Throws: ``UsageError/conflict(_:)`` for both, an unreadable batch file, an invalid name.
    init(batch: String?, arguments texts: [String], missing: String) throws(UsageError) {
        if let batch {
            guard texts.isEmpty else {
                throw .conflict("names are given either as arguments or with --batch, not both ('\(texts[0])')")
            }
            self = .batch(try BatchFeed(path: batch))
        } else {
            guard !texts.isEmpty else { throw .missingArgument(missing) }
            var names: [HostName] = []
            for text in texts { names.append(try HostName.commandLineArgument(text)) }
            self = .names(names)
        }
    }

    /// How far `--batch`'s input has been taken; `nil` for names given as arguments.
    var position: ReadPosition? {
        if case .batch(let batch) = self { return batch.position }
        return nil
    }

    /// The names as a feed the commands take from.
    var feed: any LookupFeed {
        switch self {
        case .names(let names): NameListFeed(names)
        case .batch(let batch): batch
        }
    }
}
