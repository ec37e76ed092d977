import ObjectStore
import Testing

@Suite struct XMLScanTests {
    @Test func initiateMultipartUploadResult() {
        let xml = """
            <?xml version="1.0" encoding="UTF-8"?>
            <InitiateMultipartUploadResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
            <Bucket>b</Bucket><Key>tus/abc</Key><UploadId>VXBsb2FkIElE&amp;x</UploadId>
            </InitiateMultipartUploadResult>
            """
        #expect(XMLScan(Array(xml.utf8)).first("UploadId") == "VXBsb2FkIElE&x")
        #expect(XMLScan(Array(xml.utf8)).first("Missing") == nil)
    }

    @Test func listObjectsV2Entries() {
        let xml = """
            <ListBucketResult><IsTruncated>true</IsTruncated>
            <Contents><Key>tus/a.info</Key><ETag>&quot;1&quot;</ETag><Size>3</Size></Contents>
            <Contents><Key>tus/a &lt;b&gt;</Key><Size>0</Size></Contents>
            <NextContinuationToken>tok=</NextContinuationToken></ListBucketResult>
            """
        let scan = XMLScan(Array(xml.utf8))
        #expect(scan.elements("Contents").compactMap { $0.first("Key") } == ["tus/a.info", "tus/a <b>"])
        #expect(scan.elements("Contents").first?.first("ETag") == "\"1\"")
        #expect(scan.first("IsTruncated") == "true")
        #expect(scan.first("NextContinuationToken") == "tok=")
    }

    @Test func errorAndEntities() {
        let xml = "<Error><Code>NoSuchUpload</Code><Message>a &#x41;&#66; &bogus; &</Message><Key/></Error>"
        let scan = XMLScan(Array(xml.utf8))
        #expect(scan.first("Code") == "NoSuchUpload")
        #expect(scan.first("Message") == "a AB &bogus; &")
        #expect(scan.first("Key") == "")
    }

    /// An element whose close never comes yields nothing, at every cut of the text.
    @Test func truncatedAnswers() {
        let xml = Array("<R><UploadId>abc</UploadId></R>".utf8)
        for cut in 0...xml.count {
            let value = XMLScan(Array(xml[..<cut])).first("UploadId")
            #expect(value == (cut >= 27 ? "abc" : nil), "cut at \(cut)")
        }
    }
}
