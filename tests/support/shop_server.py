"""A stateful local stand-in of WebArena's shopping site, for studies whose tasks need a login,
change the site and are checked by program_html: a customer login (the fields and button
WebArena's login recipe looks for; a POST answered with a session cookie and a redirect, as
Magento does), a product page whose "Order" button places an order for the signed-in
customer, order pages only their customer can see, and the REST calls WebArena's
``shopping_get_latest_order_url`` helper makes (an admin token, the latest order).

The real site cannot run here (it is a 30 GB Docker image); this keeps to what its pages and
API answer for these paths, nothing more.
"""

from __future__ import annotations

import html
import http.server
import json
import threading
import urllib.parse
from http.cookies import SimpleCookie

CUSTOMER = {"username": "emma@example.com", "password": "secret"}
ADMIN = {"username": "admin", "password": "admin1234"}
TOKEN = "stand-in-admin-token"


class ShopServer:
    def __init__(self) -> None:
        self.orders: list[dict[str, str]] = []  # {"id", "customer", "item"}
        self.lock = threading.Lock()
        shop = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def customer(self) -> str | None:
                cookie = SimpleCookie(self.headers.get("Cookie", ""))
                return urllib.parse.unquote(cookie["session"].value) if "session" in cookie else None

            def page(self, title: str, body: str, status: int = 200, headers: dict[str, str] | None = None) -> None:
                data = f"<!DOCTYPE html><html><head><title>{title}</title></head><body>{body}</body></html>".encode()
                self.send_response(status)
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def json(self, value: object, status: int = 200) -> None:
                data = json.dumps(value).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def redirect(self, to: str, cookie: str | None = None) -> None:
                self.send_response(302)
                self.send_header("Location", to)
                if cookie is not None:
                    self.send_header("Set-Cookie", f"session={urllib.parse.quote(cookie)}; Path=/; HttpOnly")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def form(self) -> dict[str, str]:
                length = int(self.headers.get("Content-Length", "0"))
                return dict(urllib.parse.parse_qsl(self.rfile.read(length).decode()))

            def do_GET(self) -> None:  # noqa: N802
                path, _, query = self.path.partition("?")
                who = self.customer()
                if path == "/customer/account/login/":
                    return self.page(
                        "Customer Login",
                        "<form method='post' action='/customer/account/loginPost/'>"
                        "<label for='email'>Email</label> <input id='email' name='login' type='email'> "
                        "<label for='pass'>Password</label> <input id='pass' name='password' type='password'> "
                        "<button type='submit'>Sign In</button></form>",
                    )
                if path == "/customer/account/":
                    return self.page("My Account", f"<p>Welcome back, {html.escape(who or '')}</p>")
                if path == "/":
                    hello = f"Welcome back, {html.escape(who)}" if who else "Please sign in"
                    return self.page(
                        "Shop",
                        f"<h1>Shop</h1><p id='who'>{hello}</p><h2>Blue mug</h2>"
                        "<form method='post' action='/order'><button type='submit'>Order the blue mug</button></form>",
                    )
                if path.startswith("/sales/order/view/order_id/"):
                    number = path.rstrip("/").rsplit("/", 1)[-1]
                    order = next((o for o in shop.orders if number.isdigit() and int(o["id"]) == int(number)), None)
                    if order is None or order["customer"] != who:
                        return self.page("Sign in", "<p>Please sign in to see this order</p>")
                    return self.page(
                        f"Order # {number}",
                        f"<div class='order-details'>Order #{number}: {html.escape(order['item'])}</div>",
                    )
                if path == "/rest/V1/orders":
                    if self.headers.get("Authorization") != f"Bearer {TOKEN}":
                        return self.json({"message": "not authorized"}, 401)
                    with shop.lock:
                        latest = sorted(shop.orders, key=lambda o: int(o["id"]), reverse=True)[:1]
                    return self.json({"items": [{"increment_id": o["id"]} for o in latest]})
                self.page("Not found", "<p>404</p>", 404)

            def do_POST(self) -> None:  # noqa: N802
                path = self.path.partition("?")[0]
                if path == "/customer/account/loginPost/":
                    data = self.form()
                    if data.get("login") == CUSTOMER["username"] and data.get("password") == CUSTOMER["password"]:
                        return self.redirect("/customer/account/", cookie=data["login"])
                    return self.redirect("/customer/account/login/")
                if path == "/order":
                    self.form()
                    who = self.customer()
                    if who is None:
                        return self.redirect("/customer/account/login/")
                    with shop.lock:
                        number = f"{len(shop.orders) + 1:09d}"
                        shop.orders.append({"id": number, "customer": who, "item": "Blue mug"})
                    return self.redirect(f"/sales/order/view/order_id/{number}/")
                if path == "/rest/default/V1/integration/admin/token":
                    length = int(self.headers.get("Content-Length", "0"))
                    given = json.loads(self.rfile.read(length) or b"{}")
                    if given != ADMIN:
                        return self.json({"message": "wrong admin account"}, 401)
                    return self.json(TOKEN)
                self.page("Not found", "<p>404</p>", 404)

            def log_message(self, *args: object) -> None:
                pass

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
