"""Serves tools/idb_fixture/ on 127.0.0.1 at a free port and saves the page's POST to /done.

Prints the port on its first line of stdout; writes the posted body to the file given as
argv[1] and exits after it. argv[2], if given, is the port to serve on instead (a second
page of the same origin, for a profile whose IndexedDB is kept by origin).
"""
import http.server
import os
import socketserver
import sys

OUT = sys.argv[1]
os.chdir(os.path.dirname(os.path.abspath(__file__)))


class Handler(http.server.SimpleHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        with open(OUT + ".tmp", "wb") as f:
            f.write(body)
        os.replace(OUT + ".tmp", OUT)
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args):
        pass


class Server(socketserver.TCPServer):
    allow_reuse_address = True


PORT = int(sys.argv[2]) if len(sys.argv) > 2 else 0
with Server(("127.0.0.1", PORT), Handler) as srv:
    print(srv.server_address[1], flush=True)
    while not os.path.exists(OUT):
        srv.handle_request()
