package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
	"github.com/longrun/longrun/hostcheck"
	"github.com/temporalio/ui-server/v2/server/api"
	uiauth "github.com/temporalio/ui-server/v2/server/auth"
	uiconfig "github.com/temporalio/ui-server/v2/server/config"
	"github.com/temporalio/ui-server/v2/server/cors"
	"github.com/temporalio/ui-server/v2/server/csrf"
	"github.com/temporalio/ui-server/v2/server/headers"
	"github.com/temporalio/ui-server/v2/server/route"
	"github.com/temporalio/ui-server/v2/ui"
)

// webUI is the Temporal Web UI and its API, served behind the one Host
// check (hostcheck): its API lists and signals every session (approvals
// included), and without the check a page the person visits could reach
// it through DNS rebinding.
type webUI struct {
	srv *http.Server
}

// startWebUI listens on o.IP:o.UIPort (a taken port fails the start) and
// serves the UI until stop.
//
// ui-server's own Server keeps its echo instance unexported and starts
// its own listener, so nothing could be put in front of it. The routes
// and middleware here are what its NewServer (v2.54.1) sets up for this
// configuration (no logger: HideLogs), built from its exported pieces, so
// the echo handler is ours to wrap.
func startWebUI(o Options) (*webUI, error) {
	policy, err := hostcheck.New(net.JoinHostPort(o.IP, strconv.Itoa(o.UIPort)), o.AllowedHosts, "--allowed-host")
	if err != nil {
		return nil, err
	}
	cfg := &uiconfig.Config{
		Host:                o.IP,
		Port:                o.UIPort,
		TemporalGRPCAddress: net.JoinHostPort(o.IP, strconv.Itoa(o.Port)),
		EnableUI:            true,
		CORS:                uiconfig.CORS{CookieInsecure: true},
		HideLogs:            true,
		DisableNewsFetch:    true,
	}
	e, err := newUIEcho(cfg)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(o.IP, strconv.Itoa(o.UIPort)))
	if err != nil {
		return nil, fmt.Errorf("web UI: listen: %w", err)
	}
	srv := &http.Server{Handler: hostcheck.Wrap(policy, e), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintln(os.Stderr, "devserver: web UI:", err)
			os.Exit(1)
		}
	}()
	return &webUI{srv: srv}, nil
}

// stop closes the UI, letting requests in flight finish for a moment.
func (w *webUI) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = w.srv.Shutdown(ctx)
}

// newUIEcho builds the UI's routes as ui-server's NewServer does.
func newUIEcho(c *uiconfig.Config) (*echo.Echo, error) {
	cfgProvider, err := uiconfig.NewConfigProviderWithRefresh(c)
	if err != nil {
		return nil, fmt.Errorf("web UI config: %w", err)
	}
	apiMiddleware := []api.Middleware{headers.WithForwardHeaders([]string{uiauth.AuthorizationExtrasHeader, "Caller-Type"})}
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.Use(middleware.Recover())
	e.Use(middleware.Gzip())
	e.Use(cors.CORSMiddleware(cors.CORSConfig{
		AllowHeaders: []string{
			echo.HeaderOrigin, echo.HeaderContentType, echo.HeaderAccept,
			echo.HeaderXCSRFToken, echo.HeaderAuthorization, uiauth.AuthorizationExtrasHeader,
			"Caller-Type",
		},
		AllowCredentials: true,
		ConfigProvider:   cfgProvider,
	}))
	e.Use(middleware.Secure())
	cookieSecure := !c.CORS.CookieInsecure
	e.Use(csrf.EnsureTokenCookie(cookieSecure))
	e.Use(middleware.CSRFWithConfig(csrf.MiddlewareConfig(cfgProvider, cookieSecure)))
	e.Pre(route.PublicPath(c.PublicPath))
	route.SetHealthRoute(e)
	if err := route.SetAPIRoutes(e, cfgProvider, apiMiddleware); err != nil {
		return nil, fmt.Errorf("web UI API: %w", err)
	}
	route.SetAuthRoutes(e, cfgProvider)
	assets, err := ui.Assets()
	if err != nil {
		return nil, fmt.Errorf("web UI assets: %w", err)
	}
	if assets, err = fs.Sub(assets, "local"); err != nil {
		return nil, fmt.Errorf("web UI assets: %w", err)
	}
	if err := route.SetUIRoutes(e, c.PublicPath, assets); err != nil {
		return nil, fmt.Errorf("web UI routes: %w", err)
	}
	route.SetRenderRoute(e, c.PublicPath)
	return e, nil
}
