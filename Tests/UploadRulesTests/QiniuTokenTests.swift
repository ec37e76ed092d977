import HTTPCore
import Testing
import UploadRules

@Suite struct QiniuTokenTests {
    @Test func documentationVector() {
        let policy = QiniuToken.policyJSON(
            scope: "my-bucket:sunflower.jpg", deadline: 1_451_491_200,
            extra: [
                (
                    "returnBody",
                    jsonString(
                        "{\"name\":$(fname),\"size\":$(fsize),\"w\":$(imageInfo.width),\"h\":$(imageInfo.height),\"hash\":$(etag)}"
                    )
                )
            ])
        let encoded = Base64.urlSafeEncoded(Array(policy.utf8))
        let signature = QiniuToken.hmacSHA1(key: Array("MY_SECRET_KEY".utf8), data: Array(encoded.utf8))
        #expect(
            signature.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
                == "c10e287f2b1e7f547b20a9ebce2aada26ab20ef2")
        #expect(
            QiniuToken.token(accessKey: "MY_ACCESS_KEY", secretKey: "MY_SECRET_KEY", policyJSON: policy)
                == "MY_ACCESS_KEY:wQ4ofysef1R7IKnrziqtomqyDvI=:eyJzY29wZSI6Im15LWJ1Y2tldDpzdW5mbG93ZXIuanBnIiwiZGVhZGxpbmUiOjE0NTE0OTEyMDAsInJldHVybkJvZHkiOiJ7XCJuYW1lXCI6JChmbmFtZSksXCJzaXplXCI6JChmc2l6ZSksXCJ3XCI6JChpbWFnZUluZm8ud2lkdGgpLFwiaFwiOiQoaW1hZ2VJbmZvLmhlaWdodCksXCJoYXNoXCI6JChldGFnKX0ifQ=="
        )
    }

    @Test func pythonSDKVector() {
        #expect(
            QiniuToken.sign(
                accessKey: "abcdefghklmnopq", secretKey: "1234567890",
                encodedData: Base64.urlSafeEncoded(Array("test".utf8)))
                == "abcdefghklmnopq:-jP8eEV9v48MkYiBGs81aDxl60E=:dGVzdA==")
    }

    @Test func base64Padding() {
        #expect(Base64.encoded(Array("f".utf8)) == "Zg==")
        #expect(Base64.encoded(Array("fo".utf8)) == "Zm8=")
        #expect(Base64.encoded(Array("foo".utf8)) == "Zm9v")
        #expect(Base64.urlSafeEncoded([0xFB, 0xFF]) == "-_8=")
    }
}
