import Testing

@testable import HTTPCore

/// `ContentDisposition.parse`'s one-pass path for `form-data; name="…"; filename="…"`
/// (`parsePlain`) gives what the full grammar (`parseGeneral`) gives, and hands everything else
/// to it: values built from the shapes clients send and their near misses, seeded.
@Suite struct PlainDispositionTests {
    static let seed: UInt64 = 0x0D15_7051_7104

    /// The same result, or the same error, from `parse` and from the full grammar alone.
    static func agree(_ value: [UInt8]) -> Bool {
        var plainBuffers = ContentDisposition.ValueBuffers()
        var generalBuffers = ContentDisposition.ValueBuffers()
        let viaParse = Result { () throws(HTTPCoreError) in
            try ContentDisposition.parse(value, reusing: &plainBuffers)
        }
        let viaGeneral = Result { () throws(HTTPCoreError) in
            try ContentDisposition.parseGeneral(value, reusing: &generalBuffers)
        }
        return viaParse == viaGeneral
    }

    @Test func theUsualShapesTakeThePlainPath() throws {
        let usual = [
            #"form-data; name="field""#, #"form-data; name="file"; filename="photo.jpg""#,
            #"form-data; name="""#, #"form-data; name="a"; filename="""#,
            "form-data; name=\"caf\u{E9} \u{9}tab\"; filename=\"\u{6587}\u{4EF6}.txt\"",
        ]
        for value in usual {
            var buffers = ContentDisposition.ValueBuffers()
            let plain = Array(value.utf8).withUnsafeBufferPointer {
                ContentDisposition.parsePlain($0, reusing: &buffers)
            }
            let parsed = try #require(plain, "\(value)")
            #expect(
                parsed == (try ContentDisposition.parseGeneral(Array(value.utf8), reusing: &buffers)),
                "\(value)")
            #expect(parsed.anomalies.isEmpty && parsed.parameters.isEmpty && parsed.type == "form-data")
        }
    }

    @Test func nearMissesGoToTheFullGrammar() {
        let others = [
            #"Form-Data; name="a""#, #"form-data;name="a""#, #"form-data; name=a"#, #"form-data; NAME="a""#,
            #"form-data; name="a";filename="b""#, #"form-data; name="a"; filename="b"; x="c""#,
            #"form-data; name="a\"b""#, #"form-data; name="C:\dir""#, #"form-data; name="a"x"#,
            #"form-data; name="a"; filename*=UTF-8''b"#, #"form-data; name="a" "#, #"form-data; name="a"#,
            "form-data; name=\"a\u{7F}\"", "form-data; name=\"a\rb\"", #"form-data; filename="b"; name="a""#,
        ]
        for value in others {
            var buffers = ContentDisposition.ValueBuffers()
            let plain = Array(value.utf8).withUnsafeBufferPointer {
                ContentDisposition.parsePlain($0, reusing: &buffers)
            }
            #expect(plain == nil, "\(value)")
            #expect(Self.agree(Array(value.utf8)), "\(value)")
        }
    }

    @Test func generatedValuesAgree() {
        var random = SplitMix64(seed: Self.seed)
        let pieces: [[UInt8]] = [
            Array("form-data".utf8), Array("; ".utf8), Array(";".utf8), Array("name=".utf8),
            Array("filename=".utf8), Array("\"".utf8), Array("\\".utf8), Array("a".utf8), Array("é".utf8),
            [0x09], [0x0D], [0x7F], [0x20], Array("x=".utf8), Array("filename*=".utf8),
        ]
        var disagreements: [String] = []
        for _ in 0..<20_000 {
            // Most values start as the plain shape does, then wander off it.
            var value = Array(#"form-data; name=""#.utf8)
            if random.next() % 4 == 0 { value = [] }
            for _ in 0..<Int(random.next() % 8) {
                value += pieces[Int(random.next() % UInt64(pieces.count))]
            }
            if random.next() % 2 == 0 { value += Array("\"".utf8) }
            if !Self.agree(value) { disagreements.append(String(decoding: value, as: UTF8.self)) }
        }
        #expect(disagreements.isEmpty, "seed \(Self.seed): \(disagreements.prefix(5))")
    }
}
