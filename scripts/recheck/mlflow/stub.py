"""Local OpenAI chat stub: answers {"result": yes/no, "rationale": ...} from a hash of (model, item)."""
import hashlib, json, re, sys
from http.server import BaseHTTPRequestHandler, HTTPServer
class H(BaseHTTPRequestHandler):
    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("content-length", "0"))))
        text = "\n".join(str(m.get("content", "")) for m in body.get("messages", []))
        m = re.search(r"item-(\d+)", text); item = m.group(1) if m else "?"
        model = body.get("model")
        h = int(hashlib.sha256(f"{model}|{item}".encode()).hexdigest()[:8], 16) / 2**32
        if model == "judge-c" and item == "4":
            content = "I refuse to answer in JSON."
        else:
            content = json.dumps({"result": "yes" if h < 0.6 else "no", "rationale": f"{model} on item {item}"})
        reply = {"id": "x", "object": "chat.completion", "created": 0, "model": model,
                 "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
                 "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}
        data = json.dumps(reply).encode()
        self.send_response(200); self.send_header("content-type", "application/json"); self.send_header("content-length", str(len(data))); self.end_headers(); self.wfile.write(data)
    def log_message(self, *a): pass
HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
