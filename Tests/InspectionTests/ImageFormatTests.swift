import Inspection
import Testing

@Suite struct ImageFormatTests {
    @Test func sniffedTypesNameFormats() {
        #expect(ImageFormat(mediaType: "image/jpeg") == .jpeg)
        #expect(ImageFormat(mediaType: "image/heif") == .heic)
        #expect(ImageFormat(mediaType: "text/plain") == nil)
    }
}
