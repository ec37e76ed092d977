#!/usr/bin/env python3
"""Writes real images carrying metadata, for the MetadataStripper tests (InspectionTests).

    make-image-fixtures.py OUTDIR
    make-image-fixtures.py --same-pixels A B   (exit 0 when Pillow decodes both to equal pixels)

Needs Debian's python3-pil and python3-piexif; HEIC also needs heif-enc (libheif-examples).
Writes into OUTDIR:
  photo.jpg   GPS EXIF + Orientation 6 + thumbnail, XMP (APP1), IPTC (APP13), a comment (COM)
  large.jpg   ~200 KiB of noise with the same metadata
  text.png    tEXt, iTXt (XMP), zTXt, tIME and eXIf (GPS EXIF)
  large.png   ~200 KiB of noise with the same chunks
  meta.webp   EXIF (GPS, Orientation 6) and XMP, lossless
  photo.heic  heif-enc of photo.jpg (its EXIF becomes an Exif item), only when heif-enc works
and prints a JSON manifest: {"files": [...], "heic": true|false, "heic_error": "..."}.
Deterministic: fixed seeds, fixed timestamps.
"""
import io
import json
import os
import random
import struct
import subprocess
import sys

import piexif
from PIL import Image, PngImagePlugin

XMP = (
    b'<?xpacket begin="" id="W5M0MpCehiHzreSzNTczkc9d"?>'
    b'<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">'
    b'<rdf:Description rdf:about="" xmlns:exif="http://ns.adobe.com/exif/1.0/" xmlns:dc="http://purl.org/dc/elements/1.1/"'
    b' exif:GPSLatitude="52,30.0000N" exif:GPSLongitude="13,24.0000E">'
    b"<dc:creator><rdf:Seq><rdf:li>Jane Photographer</rdf:li></rdf:Seq></dc:creator>"
    b"</rdf:Description></rdf:RDF></x:xmpmeta>"
    b'<?xpacket end="w"?>'
)


def exif_bytes(orientation=6):
    thumb = io.BytesIO()
    Image.new("RGB", (16, 12), (10, 200, 10)).save(thumb, "JPEG")
    return piexif.dump(
        {
            "0th": {
                piexif.ImageIFD.Orientation: orientation,
                piexif.ImageIFD.Make: b"FormGateCam",
                piexif.ImageIFD.Artist: b"Jane Photographer",
            },
            "Exif": {piexif.ExifIFD.DateTimeOriginal: b"2024:06:01 12:00:00"},
            "GPS": {
                piexif.GPSIFD.GPSLatitudeRef: b"N",
                piexif.GPSIFD.GPSLatitude: ((52, 1), (30, 1), (0, 1)),
                piexif.GPSIFD.GPSLongitudeRef: b"E",
                piexif.GPSIFD.GPSLongitude: ((13, 1), (24, 1), (0, 1)),
            },
            "1st": {},
            "thumbnail": thumb.getvalue(),
        }
    )


def iptc_app13():
    def dataset(number, value):
        return b"\x1c\x02" + bytes([number]) + struct.pack(">H", len(value)) + value

    iptc = dataset(80, b"Jane Photographer") + dataset(90, b"Berlin") + dataset(116, b"(c) Jane")
    block = b"8BIM\x04\x04\x00\x00" + struct.pack(">I", len(iptc)) + iptc
    if len(iptc) % 2:
        block += b"\x00"
    return b"Photoshop 3.0\x00" + block


def segment(code, payload):
    return bytes([0xFF, code]) + struct.pack(">H", len(payload) + 2) + payload


def add_jpeg_segments(data, segments):
    """Inserts segments after the APPn segments Pillow wrote."""
    at = 2
    while data[at] == 0xFF and 0xE0 <= data[at + 1] <= 0xEF:
        at += 2 + struct.unpack(">H", data[at + 2 : at + 4])[0]
    return data[:at] + b"".join(segments) + data[at:]


def noise(size, seed):
    rng = random.Random(seed)
    return Image.frombytes("RGB", size, bytes(rng.getrandbits(8) for _ in range(size[0] * size[1] * 3)))


def jpeg(image, path):
    out = io.BytesIO()
    image.save(out, "JPEG", quality=95, exif=exif_bytes())
    data = add_jpeg_segments(
        out.getvalue(),
        [
            segment(0xE1, b"http://ns.adobe.com/xap/1.0/\x00" + XMP),
            segment(0xED, iptc_app13()),
            segment(0xFE, b"taken at home, 52.5N 13.4E"),
        ],
    )
    with open(path, "wb") as f:
        f.write(data)


def png(image, path):
    info = PngImagePlugin.PngInfo()
    info.add_text("Comment", "taken at home, 52.5N 13.4E")
    info.add_itxt("XML:com.adobe.xmp", XMP.decode())
    info.add_text("Author", "Jane Photographer", zip=True)
    info.add(b"tIME", struct.pack(">HBBBBB", 2024, 6, 1, 12, 0, 0))
    image.save(path, "PNG", pnginfo=info, exif=exif_bytes())


def same_pixels(first, second):
    """--same-pixels A B: exit 0 when both decode to the same mode, size and pixels."""
    with Image.open(first) as a, Image.open(second) as b:
        a.load()
        b.load()
        same = a.mode == b.mode and a.size == b.size and a.tobytes() == b.tobytes()
    print("same" if same else f"different: {a.mode} {a.size} vs {b.mode} {b.size}")
    return 0 if same else 1


def main():
    if sys.argv[1] == "--same-pixels":
        sys.exit(same_pixels(sys.argv[2], sys.argv[3]))
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    files = []
    base = Image.new("RGB", (64, 48), (200, 30, 30))
    for x in range(64):
        base.putpixel((x, x % 48), (x * 4, 255 - x * 4, 40))
    jpeg(base, os.path.join(out, "photo.jpg"))
    jpeg(noise((400, 400), 1), os.path.join(out, "large.jpg"))
    png(base, os.path.join(out, "text.png"))
    png(noise((262, 262), 2), os.path.join(out, "large.png"))
    base.save(os.path.join(out, "meta.webp"), "WEBP", lossless=True, exif=exif_bytes(), xmp=XMP)
    files += ["photo.jpg", "large.jpg", "text.png", "large.png", "meta.webp"]
    heic, heic_error = False, ""
    try:
        result = subprocess.run(
            ["heif-enc", "-q", "90", "-o", os.path.join(out, "photo.heic"), os.path.join(out, "photo.jpg")],
            capture_output=True,
            text=True,
        )
        heic = result.returncode == 0 and os.path.getsize(os.path.join(out, "photo.heic")) > 0
        heic_error = "" if heic else result.stderr.strip()
    except (OSError, FileNotFoundError) as error:
        heic_error = str(error)
    if heic:
        files.append("photo.heic")
    print(json.dumps({"files": files, "heic": heic, "heic_error": heic_error}))


if __name__ == "__main__":
    main()
