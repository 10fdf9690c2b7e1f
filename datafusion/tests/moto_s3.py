"""A local S3 API for the tests: moto's server on 127.0.0.1 (a free port), with the buckets
named on the command line created and the files named as BUCKET/KEY=PATH uploaded. Prints the
endpoint URL on one line, then serves until its standard input closes (the test holding the
pipe ends or dies), then stops.

    python3 moto_s3.py BUCKET... [BUCKET/KEY=PATH]...
"""

import logging
import sys

import boto3
from moto.server import ThreadedMotoServer


def main() -> None:
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    s3 = boto3.client(
        "s3",
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id="test",
        aws_secret_access_key="test",
    )
    for arg in sys.argv[1:]:
        if "=" in arg:
            target, path = arg.split("=", 1)
            bucket, key = target.split("/", 1)
            with open(path, "rb") as f:
                s3.put_object(Bucket=bucket, Key=key, Body=f.read())
        else:
            s3.create_bucket(Bucket=arg)
    print(endpoint, flush=True)
    try:
        sys.stdin.read()
    finally:
        server.stop()


if __name__ == "__main__":
    main()
