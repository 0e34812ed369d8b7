"""Regenerates qr-vectors.json: QR codes made by an independent encoder, the `qrcode` package
(PyPI, BSD licence), for QRCodeTests to compare the console's encoder with module for module.

    python3 -m venv /tmp/qr && /tmp/qr/bin/pip install 'qrcode==8.*'
    /tmp/qr/bin/python Server/Tests/Vectors/qr/generate.py > Server/Tests/Vectors/qr/qr-vectors.json

Each vector: the input (hex), the version, the mask the encoder chose, and for each of the eight
masks the SHA-256 of the matrix written as rows of 0 and 1 joined by newlines (no quiet zone).
"""

import hashlib
import json

import qrcode
from importlib.metadata import version
from qrcode.util import MODE_8BIT_BYTE, QRData


def matrix(data: bytes, mask):
    code = qrcode.QRCode(error_correction=qrcode.constants.ERROR_CORRECT_M, border=0, mask_pattern=mask)
    code.add_data(QRData(data, mode=MODE_8BIT_BYTE))
    code.make(fit=True)
    rows = "\n".join("".join("1" if module else "0" for module in row) for row in code.get_matrix())
    return code, rows


inputs = [b"otpauth://totp/Tessera:ops%40example.com?secret=JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP&issuer=Tessera"]
inputs += [bytes((index * 37 + length) % 256 for index in range(length))
           for length in (1, 14, 20, 40, 60, 80, 100, 120, 150, 200, 250, 300, 400, 500, 600, 666)]
vectors = []
for data in inputs:
    chosen, _ = matrix(data, None)
    vectors.append({
        "input": data.hex(),
        "version": chosen.version,
        "mask": chosen.mask_pattern if chosen.mask_pattern is not None else chosen.best_mask_pattern(),
        "matrices": [hashlib.sha256(matrix(data, mask)[1].encode()).hexdigest() for mask in range(8)],
    })
first = matrix(inputs[0], None)[1]
print(json.dumps({"generator": "qrcode " + version("qrcode"),
                  "first_matrix": first.split("\n"), "vectors": vectors}, indent=1))
