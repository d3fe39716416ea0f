import FuzzSupport
import HostPin

/// `HostName.parse` on any text (UTF-8, invalid sequences replaced): never a crash, and a name it accepts
/// is in normal form — parsing its text again gives the same name (idempotence), with or without one
/// trailing dot — and within the limits its documentation promises.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHostName(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = String(decoding: fuzzInput(data, size), as: UTF8.self)
    guard let name = try? HostName.parse(input) else { return 0 }
    let again: HostName
    do {
        again = try HostName.parse(name.text)
    } catch {
        property(false, "\(input.debugDescription) normalises to \(name.text.debugDescription), which fails: \(error)")
        return 0
    }
    property(again == name && again.text == name.text && again.literalAddress == name.literalAddress
             && again.isLocalhost == name.isLocalhost,
             "\(input.debugDescription) normalises to \(name.text.debugDescription), which normalises to \(again.text.debugDescription)")
    if let address = name.literalAddress {
        property(name.text == address.description, "literal \(name.text) is not its address's text \(address)")
        return 0
    }
    property((try? HostName.parse(name.text + ".")) == name, "\(name.text.debugDescription) with a trailing dot is another name")
    let octets = Array(name.text.utf8)
    property(!octets.isEmpty && octets.count <= 253, "\(name.text.debugDescription) is \(octets.count) octets")
    property(octets.allSatisfy { byte in
        (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte) || byte == 0x2D || byte == 0x5F || byte == 0x2E
    }, "\(name.text.debugDescription) holds a character other than a-z 0-9 - _ .")
    for label in name.text.split(separator: ".", omittingEmptySubsequences: false) {
        property((1...63).contains(label.utf8.count) && !label.hasPrefix("-") && !label.hasSuffix("-"),
                 "\(name.text.debugDescription) has the label \(label.debugDescription)")
    }
    return 0
}
