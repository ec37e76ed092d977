import HTTPCore

/// `MediaType` and `ContentDisposition` on arbitrary bytes; a parsed disposition's canonical
/// form must parse again to the same name and file name (with `"` as `%22`, as written).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHeaderValues(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    _ = try? MediaType.parse(bytes)
    if let type = try? MediaType.parse(bytes) {
        let again = try? MediaType.parse(type.serialized)
        precondition(again?.essence == type.essence, "media type does not survive serialization")
    }
    if let disposition = try? ContentDisposition.parse(bytes) {
        let reparsed = try? ContentDisposition.parse(disposition.serialized)
        func written(_ value: [UInt8]?) -> [UInt8]? {
            value.map { bytes in
                bytes.flatMap { byte -> [UInt8] in
                    switch byte {
                    case UInt8(ascii: "\""): Array("%22".utf8)
                    case 0x0D: Array("%0D".utf8)
                    case 0x0A: Array("%0A".utf8)
                    default: [byte]
                    }
                }
            }
        }
        precondition(reparsed?.name == written(disposition.name), "name does not survive serialization")
        precondition(
            reparsed?.filename == written(disposition.filename), "filename does not survive serialization")
    }
    return 0
}
