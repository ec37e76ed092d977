import HTTP1
import HTTPCore
import Testing

/// `HeaderFields.serialize` copies fields received as `Name: value\r\n` from the parsed head in
/// runs; every other field is written piece by piece. Both must give exactly what writing each
/// field as `Name: value\r\n` gives, whatever the spacing received and whatever was changed.
@Suite struct HeadSerializationTests {
    /// Each field written on its own: the reference.
    static func reference(_ head: RequestHead) -> [UInt8] {
        var out = Array("\(head.method) \(head.target) HTTP/1.1\r\n".utf8)
        head.headers.forEachField { name, value in
            out += name
            out += Array(": ".utf8)
            out += value
            out += [0x0D, 0x0A]
        }
        return out + [0x0D, 0x0A]
    }

    static func serialized(_ head: RequestHead) -> [UInt8] {
        var sink = ByteArraySink()
        head.serialize(into: &sink)
        return sink.bytes
    }

    @Test func spacingAndChangesSerializeAsEachFieldWould() throws {
        let seed: UInt64 = 28
        var random = SplitMix64(seed: seed)
        let spacings = [": ", ":", ":  ", ":\t", ": "]
        let trailers = ["", "", " ", "\t", ""]
        for round in 0..<500 {
            var text = "POST /upload HTTP/1.1\r\nHost: example.test\r\n"
            for index in 0..<Int(random.next() % 9) {
                let spacing = spacings[Int(random.next() % UInt64(spacings.count))]
                let trailer = trailers[Int(random.next() % UInt64(trailers.count))]
                text += "X-F\(index)\(spacing)value \(index)\(trailer)\r\n"
            }
            text += "\r\n"
            var head = try HeadParser.parseRequest(Array(text.utf8))
            switch random.next() % 5 {
            case 0: head.headers.set(name: "X-F1", value: "changed")
            case 1: head.headers.prepend(name: Array("Host".utf8), value: Array("upstream".utf8))
            case 2: head.headers.removeAll(named: "X-F0")
            case 3: head.headers.append(name: "X-Added", value: "1")
            default: break
            }
            #expect(
                Self.serialized(head) == Self.reference(head),
                "seed \(seed), round \(round): \(text.debugDescription)")
        }
    }
}
