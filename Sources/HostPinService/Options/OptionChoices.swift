import HostPin
import HostPinDNS

/// The options whose value is one of a fixed set, with that set taken from the type each option's parser
/// reads it into, so that shell completion (`hostpin --generate-completion-script bash`) offers exactly
/// what the parser accepts: a new case of one of these enums is offered by itself.
package enum OptionChoices {
    /// The values offered for each option, in the order its help lists them. `--dnssec`'s parser reads
    /// ``DNSSECMode``; listed here before it is on every command line, so completion offers it the
    /// moment a subcommand's help lists the option.
    package static let values: [String: [String]] = [
        "--family": AddressFamily.allCases.map(\.description),
        "--log-level": LogLevel.allCases.map(\.rawValue),
        "--log-format": LogFormat.allCases.map(\.rawValue),
        "--blocked-answer": BlockedAnswer.allCases.map(\.rawValue),
        "--dnssec": DNSSECMode.allCases.map(\.rawValue),
    ]
}
