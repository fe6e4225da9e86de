import hashlib, json, re, sys
from http.server import BaseHTTPRequestHandler, HTTPServer
class H(BaseHTTPRequestHandler):
    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("content-length", "0"))))
        text = "\n".join(str(m.get("content", "")) for m in body.get("messages", []))
        m = re.findall(r"item-(\d+)", text); item = m[-1] if m else "?"
        model = body.get("model")
        h = int(hashlib.sha256(f"{model}|{item}".encode()).hexdigest()[:8], 16) / 2**32
        content = "no idea" if (model == "critic-c" and item == "3") else json.dumps({"reason": f"{model} on {item}", "verdict": 1 if h < 0.6 else 0})
        reply = {"id": "x", "object": "chat.completion", "created": 0, "model": model,
                 "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
                 "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}
        data = json.dumps(reply).encode()
        self.send_response(200); self.send_header("content-type", "application/json"); self.send_header("content-length", str(len(data))); self.end_headers(); self.wfile.write(data)
    def log_message(self, *a): pass
HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
