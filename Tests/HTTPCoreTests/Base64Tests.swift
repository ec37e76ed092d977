import HTTPCore
import Testing

/// Base64 as tus headers and upload policies carry it: round trips, and the strict decoder.
@Suite struct Base64Tests {
    @Test func roundTripsEveryLengthAndByte() {
        var state: UInt64 = 0x5EED  // fixed seed
        for length in 0..<300 {
            var bytes: [UInt8] = []
            for _ in 0..<length {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                bytes.append(UInt8(truncatingIfNeeded: state >> 33))
            }
            let text = Base64.encoded(bytes)
            #expect(Base64.decoded(text.utf8) == bytes, "length \(length), seed 0x5EED")
        }
        #expect(Base64.encoded(Array("foobar".utf8)) == "Zm9vYmFy")
        #expect(Base64.encoded(Array("fo".utf8)) == "Zm8=")
        #expect(Base64.encoded(Array("f".utf8)) == "Zg==")
    }

    @Test(arguments: ["Zm9", "Zm9v=", "Zg=a", "Zh==", "Zm9=Zm9v", "Zm 9v", "Zm9v\n", "====", "Zm-_"])
    func refusesLooseForms(_ text: String) {
        #expect(Base64.decoded(text.utf8) == nil)
    }
}
