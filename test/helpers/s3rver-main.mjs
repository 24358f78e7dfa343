// Runs s3rver (npm, a third-party S3 server written in Node) on 127.0.0.1 at a free port with
// one bucket, and prints {"port": N} on stdout once it listens. Args: <directory> <bucket>.
// Started by test/helpers/s3rver.ts in a process of its own (s3rver's logger handles uncaught
// exceptions process-wide, which a test process must not share).
import S3rver from 's3rver';

const [directory, bucket] = process.argv.slice(2);
new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory, configureBuckets: [{ name: bucket }] })
  .run()
  .then((address) => process.stdout.write(`${JSON.stringify({ port: address.port })}\n`))
  .catch((error) => {
    process.stderr.write(`s3rver did not start: ${error && error.stack ? error.stack : error}\n`);
    process.exit(1);
  });
